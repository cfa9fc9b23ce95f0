package kube

import (
	"bytes"
	"cmp"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/tollperf/toll/plan"
	"github.com/tollperf/toll/scenario"
)

var update = flag.Bool("update", false, "rewrite the golden manifests in testdata")

// Decoded holds the objects of a rendered stream, each decoded strictly
// into its Kubernetes API type.
type decoded struct {
	pods     []*corev1.Pod
	services []*corev1.Service
	jobs     []*batchv1.Job
	other    []string // kinds of the RBAC objects
}

// decodeStrict decodes every document of a multi-document YAML stream into
// the Kubernetes API type its kind names; a field the type does not have
// fails, as kubectl apply --validate=strict would.
func decodeStrict(t *testing.T, stream []byte) decoded {
	t.Helper()
	var d decoded
	for i, doc := range bytes.Split(stream, []byte("\n---\n")) {
		doc = bytes.TrimPrefix(doc, []byte("---\n"))
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		var obj any
		switch tm.APIVersion + " " + tm.Kind {
		case "v1 Pod":
			p := &corev1.Pod{}
			d.pods, obj = append(d.pods, p), p
		case "v1 Service":
			s := &corev1.Service{}
			d.services, obj = append(d.services, s), s
		case "batch/v1 Job":
			j := &batchv1.Job{}
			d.jobs, obj = append(d.jobs, j), j
		case "v1 ServiceAccount":
			obj = &corev1.ServiceAccount{}
		case "rbac.authorization.k8s.io/v1 Role":
			obj = &rbacv1.Role{}
		case "rbac.authorization.k8s.io/v1 RoleBinding":
			obj = &rbacv1.RoleBinding{}
		default:
			t.Fatalf("document %d: unexpected kind %q %q", i, tm.APIVersion, tm.Kind)
		}
		if err := yaml.UnmarshalStrict(doc, obj); err != nil {
			t.Fatalf("document %d (%s): strict decode: %v\n%s", i, tm.Kind, err, doc)
		}
		if _, ok := obj.(*corev1.ServiceAccount); ok {
			d.other = append(d.other, tm.Kind)
		} else if _, ok := obj.(*rbacv1.Role); ok {
			d.other = append(d.other, tm.Kind)
		} else if _, ok := obj.(*rbacv1.RoleBinding); ok {
			d.other = append(d.other, tm.Kind)
		}
	}
	return d
}

func render(t *testing.T, path string, opt RenderOptions) []byte {
	t.Helper()
	return renderWith(t, path, scenario.Overrides{}, opt)
}

// renderWith is render with o's settings in place of the file's.
func renderWith(t *testing.T, path string, o scenario.Overrides, opt RenderOptions) []byte {
	t.Helper()
	s, err := scenario.ReadWith(path, o)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Render(&b, s, opt); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestRenderGolden compares each rendered stream with its golden file, so
// a change to the objects is reviewed as a diff (go test ./kube -update).
func TestRenderGolden(t *testing.T) {
	// The quickstart is a shared duet restarted every round; a cluster
	// runs it one variant at a time (--sequential), and started once its
	// objects fit a reviewable diff.
	once := scenario.RestartOnce
	for _, tt := range []struct {
		name, path string
		o          scenario.Overrides
	}{
		{"quickstart", "../examples/quickstart.yaml", scenario.Overrides{Restart: &once, Sequential: true}},
		{"limits", "testdata/limits.yaml", scenario.Overrides{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := renderWith(t, tt.path, tt.o, RenderOptions{RBAC: true})
			golden := filepath.Join("testdata", tt.name+".golden.yaml")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test ./kube -update writes it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("rendered %s differs from %s (go test ./kube -update, then review the diff)", tt.path, golden)
			}
			decodeStrict(t, want)
		})
	}
}

// TestRenderFollowsScenario checks that what the scenario says (resources,
// labels, images, scheduling, restarts) is what the manifests say.
func TestRenderFollowsScenario(t *testing.T) {
	d := decodeStrict(t, render(t, "testdata/limits.yaml", RenderOptions{RBAC: true, Run: "42-7"}))
	// Two variants × (sink pod, sink Service, Service); per-round: a pod
	// per variant per round of each rate, and a Job per trial (2 variants
	// × 2 rounds × 2 rates).
	if len(d.pods) != 2+8 || len(d.services) != 4 || len(d.jobs) != 8 {
		t.Fatalf("%d pods, %d services, %d jobs; want 10, 4, 8", len(d.pods), len(d.services), len(d.jobs))
	}
	if fmt.Sprint(d.other) != "[ServiceAccount Role RoleBinding]" {
		t.Errorf("RBAC objects %v", d.other)
	}
	// image_pull_policy: every container, toll's own too.
	specs := []corev1.PodSpec{}
	for _, p := range d.pods {
		specs = append(specs, p.Spec)
	}
	for _, j := range d.jobs {
		specs = append(specs, j.Spec.Template.Spec)
	}
	for _, spec := range specs {
		for _, c := range spec.Containers {
			if c.ImagePullPolicy != corev1.PullNever {
				t.Errorf("container %s: imagePullPolicy %q, want Never", c.Name, c.ImagePullPolicy)
			}
		}
	}
	var objs []metav1.Object
	for _, p := range d.pods {
		objs = append(objs, p)
	}
	for _, s := range d.services {
		objs = append(objs, s)
	}
	for _, j := range d.jobs {
		objs = append(objs, j)
	}
	for _, o := range objs {
		l := o.GetLabels()
		if l[LabelRun] != "42-7" || l[LabelManagedBy] != ManagedBy || l[LabelScenario] != "Limits_Test" || l[LabelComponent] == "" {
			t.Errorf("%s: labels %v", o.GetName(), l)
		}
		if o.GetNamespace() != "perf" {
			t.Errorf("%s: namespace %q", o.GetName(), o.GetNamespace())
		}
	}
	var withAgent *corev1.Pod
	for _, p := range d.pods {
		if p.Labels[LabelComponent] == ComponentServices && p.Labels[LabelVariant] == "with-agent" && p.Labels[LabelStart] == "2" {
			withAgent = p
		}
		if p.Spec.NodeSelector["node.kubernetes.io/instance-type"] != "m6i.xlarge" || len(p.Spec.Tolerations) != 1 ||
			p.Spec.Tolerations[0].Effect != corev1.TaintEffectNoSchedule || p.Spec.ServiceAccountName != "toll-runner" {
			t.Errorf("%s: scheduling %v %v %q", p.Name, p.Spec.NodeSelector, p.Spec.Tolerations, p.Spec.ServiceAccountName)
		}
		if p.Spec.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("%s: restartPolicy %s", p.Name, p.Spec.RestartPolicy)
		}
	}
	if withAgent == nil {
		t.Fatal("no pod for with-agent's second start (restart: per-round)")
	}
	if withAgent.Spec.ShareProcessNamespace == nil || !*withAgent.Spec.ShareProcessNamespace {
		t.Error("the probe needs the pod's process namespace")
	}
	if aa := withAgent.Spec.Affinity; aa == nil || aa.PodAntiAffinity == nil || len(aa.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 1 {
		t.Errorf("node-per-variant: want a required anti-affinity, got %+v", aa)
	}
	want := map[string]struct {
		image    string
		cpu, mem string
	}{
		"app":          {"registry.example/app:1.2", "1500m", "512Mi"},
		"collector":    {"otel/opentelemetry-collector:0.110.0", "250m", "128Mi"},
		ProbeContainer: {"registry.example/toll:0.9", "100m", "64Mi"},
	}
	if len(withAgent.Spec.Containers) != len(want) {
		t.Fatalf("containers %d, want %d", len(withAgent.Spec.Containers), len(want))
	}
	for _, c := range withAgent.Spec.Containers {
		w, ok := want[c.Name]
		if !ok {
			t.Fatalf("unexpected container %s", c.Name)
		}
		if c.Image != w.image {
			t.Errorf("%s: image %s, want %s", c.Name, c.Image, w.image)
		}
		for _, rl := range []corev1.ResourceList{c.Resources.Requests, c.Resources.Limits} {
			if q := rl[corev1.ResourceCPU]; q.Cmp(resource.MustParse(w.cpu)) != 0 {
				t.Errorf("%s: cpu %s, want %s", c.Name, q.String(), w.cpu)
			}
			if q := rl[corev1.ResourceMemory]; q.Cmp(resource.MustParse(w.mem)) != 0 {
				t.Errorf("%s: memory %s, want %s", c.Name, q.String(), w.mem)
			}
		}
		if c.Name == "app" && !strings.Contains(strings.Join(c.Command, " "), "0.0.0.0:8080") {
			t.Errorf("app: ${listen} must be every interface in a pod: %v", c.Command)
		}
		if c.Name == "app" {
			env := map[string]string{}
			for _, e := range c.Env {
				env[e.Name] = e.Value
			}
			// The sink is reached through the cluster IP the kubelet puts
			// in the Service's variable: no cluster DNS is needed.
			sinkSvc := d.service(t, "with-agent", ComponentSink)
			if ServiceEnv(sinkSvc) != "TOLL_SINK_LIMITS_TEST_WITH_AGENT_42_7_SERVICE_HOST" ||
				env["OTEL_EXPORTER_OTLP_ENDPOINT"] != "http://$("+ServiceEnv(sinkSvc)+"):4318" || env[EnvService] != "app" {
				t.Errorf("app env %v, want the address of the sink Service %s", env, sinkSvc)
			}
		}
	}
	for _, j := range d.jobs {
		if *j.Spec.BackoffLimit != 0 || j.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("%s: a failed load must fail its trial, not be retried", j.Name)
		}
		argv := j.Spec.Template.Spec.Containers[0].Command
		svc := d.service(t, j.Labels[LabelVariant], ComponentServices)
		cmd := expandLikeKubelet(strings.Join(argv, " "), map[string]string{ServiceEnv(svc): "10.0.0.9"})
		if !strings.Contains(cmd, `"url":"http://10.0.0.9:8080/"`) || !strings.Contains(cmd, `"X-Id":"${id}"`) || !strings.Contains(cmd, "--rate") {
			t.Errorf("%s: load command, as the kubelet runs it: %s", j.Name, cmd)
		}
	}
}

// TestRenderRefuses checks that what a cluster cannot run is refused with
// the field named, before anything is created.
func TestRenderRefuses(t *testing.T) {
	for _, tt := range []struct{ name, edit, want string }{
		{"no image", "command: [otelcol, --config, /etc/otelcol.yaml]\n    role: agent\n    cpu_limit: 0.25\n    memory_limit: 128MiB\n", "service collector: a cluster runs images"},
		{"log readiness", "ready: {tcp: \"127.0.0.1:${port:app}\", timeout: 20s}", "ready.log"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src, err := os.ReadFile("testdata/limits.yaml")
			if err != nil {
				t.Fatal(err)
			}
			s := string(src)
			switch tt.name {
			case "no image":
				s = strings.Replace(s, "  images: {collector: otel/opentelemetry-collector:0.110.0}\n", "", 1)
			case "log readiness":
				s = strings.Replace(s, tt.edit, `ready: {log: "started", timeout: 20s}`, 1)
			}
			sc, err := scenario.Parse("limits.yaml", []byte(s))
			if err != nil {
				t.Fatal(err)
			}
			err = Render(&bytes.Buffer{}, sc, RenderOptions{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}

// TestStrictDecodeRefusesUnknownFields shows that the golden tests' decoding
// would catch a field the API does not have (a typo, a wrong level).
func TestStrictDecodeRefusesUnknownFields(t *testing.T) {
	doc := []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers: [{name: a, image: b, cpuLimit: 2}]\n")
	if err := yaml.UnmarshalStrict(doc, &corev1.Pod{}); err == nil {
		t.Fatal("a container's unknown field cpuLimit decoded without error")
	}
}

// expandLikeKubelet expands a container's command as the kubelet does:
// $(VAR) of a known variable is its value, $$ is $, the rest stays.
func expandLikeKubelet(s string, vars map[string]string) string {
	var out strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "$$"):
			out.WriteByte('$')
			i++
		case strings.HasPrefix(s[i:], "$("):
			end := strings.IndexByte(s[i:], ')')
			if v, ok := vars[s[i+2:i+max(end, 2)]]; end > 0 && ok {
				out.WriteString(v)
				i += end
				continue
			}
			out.WriteByte('$')
		default:
			out.WriteByte(s[i])
		}
	}
	return out.String()
}

// service is the name of the Service of variant's component.
func (d decoded) service(t *testing.T, variant, component string) string {
	t.Helper()
	for _, s := range d.services {
		if s.Labels[LabelVariant] == variant && s.Labels[LabelComponent] == component {
			return s.Name
		}
	}
	t.Fatalf("no Service of variant %s's %s", variant, component)
	return ""
}

// TestLoadPlacement checks that every load Job keeps off the nodes of the
// run's service pods: preferably by default, always with
// kubernetes.load_placement: other-node.
func TestLoadPlacement(t *testing.T) {
	tests := []struct {
		placement string
		required  bool
	}{
		{"", false},
		{scenario.LoadPlacementPreferOtherNode, false},
		{scenario.LoadPlacementOtherNode, true},
	}
	for _, tt := range tests {
		t.Run(cmp.Or(tt.placement, "default"), func(t *testing.T) {
			s, err := scenario.Read("testdata/limits.yaml")
			if err != nil {
				t.Fatal(err)
			}
			s.Kubernetes.LoadPlacement = tt.placement
			b, err := NewBuilder(s, "42-7", "")
			if err != nil {
				t.Fatal(err)
			}
			aa := b.Job(&plan.Trial{Index: 1, Variant: "baseline", Rate: 100}, time.Time{}, false).Spec.Template.Spec.Affinity
			if aa == nil || aa.PodAntiAffinity == nil || aa.PodAffinity != nil {
				t.Fatalf("affinity %+v: want an anti-affinity only", aa)
			}
			var terms []corev1.PodAffinityTerm
			terms = append(terms, aa.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
			for _, w := range aa.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
				terms = append(terms, w.PodAffinityTerm)
			}
			if got := len(aa.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) == 1; got != tt.required || len(terms) != 1 {
				t.Fatalf("anti-affinity %+v: required %v, want %v, one term", aa.PodAntiAffinity, got, tt.required)
			}
			want := map[string]string{LabelRun: "42-7", LabelComponent: ComponentServices}
			if term := terms[0]; term.TopologyKey != "kubernetes.io/hostname" || fmt.Sprint(term.LabelSelector.MatchLabels) != fmt.Sprint(want) {
				t.Errorf("term %+v: want the run's service pods' nodes", term)
			}
		})
	}
}
