package kube

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/tollperf/toll/plan"
	"github.com/tollperf/toll/scenario"
	"github.com/tollperf/toll/variant"
)

// Builder makes the Kubernetes objects of one run of a scenario. The same
// objects are created by Runner and printed by Render.
type Builder struct {
	s        *scenario.Scenario
	k        scenario.Kubernetes
	run      string // LabelRun's value
	host     string // LabelHost's value
	variants map[string]*variant.Variant
	ports    map[string]int // by ${port:NAME}
	targets  map[string]*url.URL
}

// NewBuilder resolves every variant of s for the cluster: ${port:NAME} is
// a fixed port per name from FirstPort (each pod has its own network),
// ${sink} the variant's sink Service, ${listen} every interface, and a
// command's first word "toll" is the toll image's binary. It fails, naming
// the field, on what a cluster cannot run: a service without an image that
// is not toll, a readiness log, a target that is not a variant's pod.
func NewBuilder(s *scenario.Scenario, runLabel, host string) (*Builder, error) {
	k := scenario.Kubernetes{Namespace: "default", TollImage: scenario.DefaultTollImage, Placement: scenario.PlacementSameNode,
		LoadPlacement: scenario.LoadPlacementPreferOtherNode}
	if s.Kubernetes != nil {
		k = *s.Kubernetes
	}
	b := &Builder{s: s, k: k, run: runLabel, host: labelValue(host), variants: map[string]*variant.Variant{}, ports: map[string]int{}, targets: map[string]*url.URL{}}
	if s.Job != nil && len(s.Services) > 0 {
		return nil, fmt.Errorf("%s: services: a job experiment with services runs on this machine only for now: in a cluster the job runs in a pod of its own, which does not share the services' loopback addresses", s.Path)
	}
	for i, svc := range s.Services {
		if svc.Ready.Log != "" {
			return nil, fmt.Errorf("%s: services[%d] (%s): ready.log: a readiness log line is not read in a cluster yet; use ready.http or ready.tcp", s.Path, i, svc.Name)
		}
	}
	for _, v := range s.Variants {
		rv, err := variant.Resolve(s, v.Name, variant.Placeholders{Port: b.port, Sink: b.sinkURL(v.Name), Toll: TollPath, Listen: "0.0.0.0"})
		if err != nil {
			return nil, fmt.Errorf("%s: variant %s: %w", s.Path, v.Name, err)
		}
		for _, svc := range rv.Services {
			if b.image(svc) == "" {
				return nil, fmt.Errorf("%s: service %s: a cluster runs images: set its image, or kubernetes.images.%s, or give it a command that starts with toll", s.Path, svc.Name, svc.Name)
			}
		}
		b.variants[v.Name] = rv
		if rv.Job != nil && b.jobImage(rv) == "" {
			return nil, fmt.Errorf("%s: variant %s: job.command: a cluster runs images: start the command with toll, or set kubernetes.images.%s", s.Path, v.Name, scenario.JobImage)
		}
		if s.Workload() != scenario.WorkloadLoad {
			continue // no load: no target, and no Service in front of the pods
		}
		u, err := url.Parse(rv.Target)
		if err != nil || u.Port() == "" {
			return nil, fmt.Errorf("%s: variant %s: load.target %q: want http://HOST:PORT in a cluster", s.Path, v.Name, rv.Target)
		}
		if h := u.Hostname(); h != "127.0.0.1" && h != "localhost" && h != "0.0.0.0" && h != "::1" {
			return nil, fmt.Errorf("%s: variant %s: load.target %q: in a cluster the load reaches the variant's pod through its Service; give the target as 127.0.0.1:PORT of one of its services", s.Path, v.Name, rv.Target)
		}
		b.targets[v.Name] = u
	}
	return b, nil
}

// Namespace is where the run's objects go.
func (b *Builder) Namespace() string { return b.k.Namespace }

// port numbers ${port:NAME} in the order names first appear.
func (b *Builder) port(name string) (int, error) {
	if p, ok := b.ports[name]; ok {
		return p, nil
	}
	p := FirstPort + len(b.ports)
	b.ports[name] = p
	return p, nil
}

// image is a service's image in the cluster, "" when it has none.
func (b *Builder) image(svc variant.Service) string {
	switch {
	case svc.Image != "":
		return svc.Image
	case b.k.Images[svc.Name] != "":
		return b.k.Images[svc.Name]
	case len(svc.Argv) > 0 && svc.Argv[0] == TollPath:
		return b.k.TollImage
	}
	return ""
}

// jobImage is the image of a variant's job in the cluster: toll's for a
// command that starts with toll, else kubernetes.images.job; "" when it
// has none.
func (b *Builder) jobImage(v *variant.Variant) string {
	if len(v.Job.Argv) > 0 && v.Job.Argv[0] == TollPath {
		return b.k.TollImage
	}
	return b.k.Images[scenario.JobImage]
}

// pull is every container's image pull policy: the scenario's, else
// Kubernetes' default.
func (b *Builder) pull() corev1.PullPolicy { return corev1.PullPolicy(b.k.ImagePullPolicy) }

// Labels are the labels of every object of the run that serves variant
// ("" for none) as component.
func (b *Builder) Labels(variant, component string) map[string]string {
	l := map[string]string{LabelManagedBy: ManagedBy, LabelRun: b.run, LabelScenario: labelValue(b.s.Name), LabelComponent: component}
	if b.host != "" {
		l[LabelHost] = b.host
	}
	if variant != "" {
		l[LabelVariant] = labelValue(variant)
	}
	return l
}

func (b *Builder) meta(name, variant, component string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: b.k.Namespace, Labels: b.Labels(variant, component)}
}

// RunSelector selects every object of the run.
func (b *Builder) RunSelector() string { return LabelRun + "=" + b.run }

// PodName names the pod of a variant's start-th start.
func (b *Builder) PodName(variant string, start int) string {
	return objectName("toll", b.s.Name, variant, b.run, "s"+strconv.Itoa(start))
}

// ServiceName names the Service in front of a variant's pods.
func (b *Builder) ServiceName(variant string) string {
	return objectName("toll", b.s.Name, variant, b.run)
}

// SinkName names the pod and Service of a variant's telemetry sink.
func (b *Builder) SinkName(variant string) string {
	return objectName("toll-sink", b.s.Name, variant, b.run)
}

// JobName names the load Job of trial index.
func (b *Builder) JobName(index int) string {
	return objectName("toll-load", b.s.Name, b.run, "t"+strconv.Itoa(index))
}

// serviceHost is the address of Service name in a pod's command and
// environment: the kubelet's $(NAME_SERVICE_HOST) variable, which it
// expands to the Service's cluster IP in every container created after
// the Service (toll creates each Service before the pods that use it). A
// cluster without DNS (no CoreDNS, a node's own resolver) reaches a
// Service so too, and no request waits for a name lookup.
func serviceHost(name string) string {
	return "$(" + ServiceEnv(name) + ")"
}

// ServiceEnv is the environment variable that holds the cluster IP of
// Service name in the pods of its namespace (enableServiceLinks, on by
// default).
func ServiceEnv(name string) string {
	return strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "_SERVICE_HOST"
}

// escapeExpansion keeps s as it is through the kubelet's expansion of
// $(VAR) in commands and environment values ($$ is a literal $).
func escapeExpansion(s string) string { return strings.ReplaceAll(s, "$", "$$") }

func (b *Builder) sinkURL(variant string) string {
	return "http://" + serviceHost(b.SinkName(variant)) + ":" + strconv.Itoa(SinkPort)
}

// StopGrace is how long a pod's containers get between SIGTERM and SIGKILL
// when toll deletes it: a local run's default grace.
const StopGrace = 5 * time.Second

// podSpec is the part every pod of the run shares: scheduling from the
// scenario's kubernetes block, a local run's stop grace, and no restarts,
// so that a service that exits ends its trial as on one machine instead
// of being restarted behind toll's back.
func (b *Builder) podSpec() corev1.PodSpec {
	grace := int64(StopGrace.Seconds())
	spec := corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, NodeSelector: b.k.NodeSelector, ServiceAccountName: b.k.ServiceAccount,
		TerminationGracePeriodSeconds: &grace}
	for _, t := range b.k.Tolerations {
		spec.Tolerations = append(spec.Tolerations, corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOperator(t.Operator),
			Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
	}
	return spec
}

// Pod is the pod of variant's start-th start: one container per service,
// with the scenario's cpu_limit and memory_limit as both requests and
// limits (Guaranteed QoS when every service sets both), and toll's probe
// container, which shares the pod's process namespace and samples every
// service's processes (TOLL_SERVICE in their environment) each
// scenario.sample. The pod is ready when every service's readiness check
// passes, run by the probe container inside the pod's network. The probe
// container comes first, so that it runs before the services start, and
// times each service's start from inside the pod (probe --startup, a
// StartLine per service with a readiness check): launch to ready, as a
// local start is timed.
func (b *Builder) Pod(variant string, start int) *corev1.Pod {
	v := b.variants[variant]
	share := true
	spec := b.podSpec()
	spec.ShareProcessNamespace = &share
	spec.Affinity = b.affinity(variant)
	var ready []string
	var checks []StartCheck
	for _, svc := range v.Services {
		if svc.Ready.HTTP != "" || svc.Ready.TCP != "" {
			checks = append(checks, StartCheck{Service: svc.Name, HTTP: svc.Ready.HTTP, TCP: svc.Ready.TCP})
		}
		c := corev1.Container{Name: objectName(svc.Name), Image: b.image(svc), Command: svc.Argv,
			Resources: resources(svc.CPULimit, int64(svc.MemoryLimit)), ImagePullPolicy: b.pull()}
		if svc.Image != "" {
			c.WorkingDir = svc.Dir
		}
		for _, kv := range svc.Own {
			k, val, _ := strings.Cut(kv, "=")
			c.Env = append(c.Env, corev1.EnvVar{Name: k, Value: val})
		}
		c.Env = append(c.Env, corev1.EnvVar{Name: "TOLL_RUN", Value: b.run}, corev1.EnvVar{Name: EnvService, Value: svc.Name})
		spec.Containers = append(spec.Containers, c)
		if svc.Ready.HTTP != "" {
			ready = append(ready, "--http", svc.Ready.HTTP)
		}
		if svc.Ready.TCP != "" {
			ready = append(ready, "--tcp", svc.Ready.TCP)
		}
	}
	probe := corev1.Container{Name: ProbeContainer, Image: b.k.TollImage, ImagePullPolicy: b.pull(),
		Command: []string{TollPath, "k8s", "probe", "--interval", b.s.Sample.D().String()},
		Env:     []corev1.EnvVar{{Name: "TOLL_RUN", Value: b.run}},
		// Reading another container's /proc/PID/environ and fds needs
		// ptrace access to it.
		SecurityContext: &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_PTRACE"}}},
		// The readiness probe, a toll process per second, runs within
		// this limit too.
		Resources: resources(ProbeCPU, 64<<20),
	}
	if len(ready) > 0 {
		probe.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{
			Command: append([]string{TollPath, "k8s", "ready"}, ready...)}}, PeriodSeconds: 1, FailureThreshold: 1, TimeoutSeconds: 5}
	}
	if len(checks) > 0 {
		js, _ := json.Marshal(checks)
		probe.Command = append(probe.Command, "--startup", escapeExpansion(string(js)))
	}
	spec.Containers = append([]corev1.Container{probe}, spec.Containers...)
	meta := b.meta(b.PodName(variant, start), variant, ComponentServices)
	meta.Labels[LabelStart] = strconv.Itoa(start)
	return &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: meta, Spec: spec}
}

// StartupPod is the pod of trial t of a start-up experiment, the start-th
// start of its variant: Pod (toll's probe first, timing each service's
// start), with the trial's CPU limit (t.CPULimit, when above 0) on every
// service in place of its own.
func (b *Builder) StartupPod(t *plan.Trial, start int) *corev1.Pod {
	p := b.Pod(t.Variant, start)
	v := b.variants[t.Variant]
	cs := p.Spec.Containers
	for i, svc := range v.Services {
		if t.CPULimit > 0 {
			cs[i+1].Resources = resources(t.CPULimit, int64(svc.MemoryLimit))
		}
	}
	// No CPU quota on the probe here: it checks every service every 25 ms
	// and the kubelet runs its readiness command beside it, and a
	// throttled probe would see a start late by up to a quota period.
	cs[0].Resources = resources(0, 64<<20)
	p.Labels[LabelTrial] = strconv.Itoa(t.Index)
	return p
}

// ProbeCPU is the probe container's CPU request and limit, in cores: a
// scan of a pod's few processes a second, and the readiness checks.
const ProbeCPU = 0.1

// EnvService names, in a service container's environment, the service it
// runs, so that the probe finds its processes.
const EnvService = "TOLL_SERVICE"

// affinity places the variants' pods: on one node (same-node: each pod
// must share a node with the run's other service pods, the first one
// anywhere) or each variant on a node of its own (node-per-variant).
func (b *Builder) affinity(variant string) *corev1.Affinity {
	runPods := metav1.LabelSelectorRequirement{Key: LabelRun, Operator: metav1.LabelSelectorOpIn, Values: []string{b.run}}
	svcPods := metav1.LabelSelectorRequirement{Key: LabelComponent, Operator: metav1.LabelSelectorOpIn, Values: []string{ComponentServices}}
	if b.k.Placement == scenario.PlacementNodePerVariant {
		others := metav1.LabelSelectorRequirement{Key: LabelVariant, Operator: metav1.LabelSelectorOpNotIn, Values: []string{labelValue(variant)}}
		return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{runPods, svcPods, others}},
			TopologyKey:   "kubernetes.io/hostname"}}}}
	}
	return &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
		LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{runPods, svcPods}},
		TopologyKey:   "kubernetes.io/hostname"}}}}
}

// resources are a container's requests and limits, equal: cpu in cores,
// memory in bytes; none for a zero.
func resources(cpu float64, memory int64) corev1.ResourceRequirements {
	rl := corev1.ResourceList{}
	if cpu > 0 {
		rl[corev1.ResourceCPU] = *resource.NewMilliQuantity(int64(cpu*1000+0.5), resource.DecimalSI)
	}
	if memory > 0 {
		rl[corev1.ResourceMemory] = *resource.NewQuantity(memory, resource.BinarySI)
	}
	if len(rl) == 0 {
		return corev1.ResourceRequirements{}
	}
	return corev1.ResourceRequirements{Requests: rl, Limits: rl.DeepCopy()}
}

// Service is the Service in front of a variant's pods, on the target's port.
func (b *Builder) Service(variant string) *corev1.Service {
	port, _ := strconv.Atoi(b.targets[variant].Port())
	sel := map[string]string{LabelRun: b.run, LabelVariant: labelValue(variant), LabelComponent: ComponentServices}
	return &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: b.meta(b.ServiceName(variant), variant, ComponentServices),
		Spec:       corev1.ServiceSpec{Selector: sel, Ports: []corev1.ServicePort{{Name: "target", Port: int32(port), TargetPort: intstr.FromInt32(int32(port))}}}}
}

// SinkPod is the pod of a variant's telemetry sink: `toll k8s sink`, which
// prints its counts every scenario.sample.
func (b *Builder) SinkPod(variant string) *corev1.Pod {
	spec := b.podSpec()
	spec.Containers = []corev1.Container{{Name: SinkContainer, Image: b.k.TollImage, ImagePullPolicy: b.pull(),
		Command:   []string{TollPath, "k8s", "sink", "--addr", ":" + strconv.Itoa(SinkPort), "--interval", b.s.Sample.D().String()},
		Ports:     []corev1.ContainerPort{{Name: "sink", ContainerPort: SinkPort}},
		Resources: resources(0.25, 128<<20),
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(SinkPort)}},
			PeriodSeconds: 1}}}
	return &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: b.meta(b.SinkName(variant), variant, ComponentSink), Spec: spec}
}

// SinkService is the Service agents of a variant export to (${sink}).
func (b *Builder) SinkService(variant string) *corev1.Service {
	return &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: b.meta(b.SinkName(variant), variant, ComponentSink),
		Spec: corev1.ServiceSpec{Selector: map[string]string{LabelRun: b.run, LabelVariant: labelValue(variant), LabelComponent: ComponentSink},
			Ports: []corev1.ServicePort{{Name: "sink", Port: SinkPort, TargetPort: intstr.FromInt32(SinkPort)}}}}
}

// LoadRequest is one request of the mix as `toll k8s load --requests`
// takes it (JSON).
type LoadRequest struct {
	Name    string            `json:"name"`
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
	Weight  int               `json:"weight"`
}

// Target is the base URL the variant's load goes to, as the trial
// records it: its target with the host replaced by the variant's Service's
// name in the namespace.
func (b *Builder) Target(variant string) string {
	u := *b.targets[variant]
	u.Host = b.ServiceName(variant) + "." + b.k.Namespace + ".svc:" + u.Port()
	return u.String()
}

// jobTarget is Target as the load Job's command gives it: the Service's
// address expanded by the kubelet, the rest kept as it is.
func (b *Builder) jobTarget(variant string) string {
	u := *b.targets[variant]
	return "http://" + serviceHost(b.ServiceName(variant)) + ":" + u.Port() + escapeExpansion(strings.TrimPrefix(u.String(), u.Scheme+"://"+u.Host))
}

// Requests is variant's request mix with its target's host replaced by
// the variant's Service.
func (b *Builder) Requests(variant string) []LoadRequest {
	v := b.variants[variant]
	target := b.jobTarget(variant)
	var out []LoadRequest
	for _, q := range v.Requests {
		r := LoadRequest{Name: escapeExpansion(q.Name), Method: q.Method, URL: target + escapeExpansion(strings.TrimPrefix(q.URL, v.Target)),
			Body: escapeExpansion(string(q.Body)), Weight: q.Weight}
		for k := range q.Header {
			if r.Headers == nil {
				r.Headers = map[string]string{}
			}
			r.Headers[escapeExpansion(k)] = escapeExpansion(q.Header.Get(k))
		}
		out = append(out, r)
	}
	return out
}

// LoadPods is how many pods each load Job runs (kubernetes.load_pods).
func (b *Builder) LoadPods() int { return max(b.k.LoadPods, 1) }

// Job is the load Job of trial t: `toll k8s load` with the scenario's load
// settings at the trial's step, kept off the nodes of the run's service
// pods (loadAffinity), never retried (a failed load fails its trial).
// With several load pods each sends an equal share of the rate (or of the
// users), and none starts before notBefore, so that they share one
// timeline; a zero notBefore (one pod, or Render) starts at once. A
// trial that is the first since its variant's pod started (fresh) begins
// with the variant warm-up (load.variant_warmup) at the trial's load,
// before its own warm-up: VariantWarmup says how long.
func (b *Builder) Job(t *plan.Trial, notBefore time.Time, fresh bool) *batchv1.Job {
	l := b.s.Load
	n := b.LoadPods()
	reqs, _ := json.Marshal(b.Requests(t.Variant))
	warmup := l.Warmup.D()
	if fresh {
		warmup += b.VariantWarmup()
	}
	args := []string{TollPath, "k8s", "load", "--requests", string(reqs),
		"--warmup", warmup.String(), "--duration", l.Duration.D().String(), "--timeout", l.Timeout.D().String()}
	if !notBefore.IsZero() {
		args = append(args, "--not-before", notBefore.UTC().Format(time.RFC3339Nano))
	}
	if t.Users > 0 {
		args = append(args, "--users", strconv.Itoa(t.Users/n), "--think", l.Think.D().String(), "--ramp", l.Ramp.D().String())
		if l.ThinkDistribution == "exponential" {
			args = append(args, "--think-exponential")
		}
	} else {
		args = append(args, "--rate", strconv.FormatFloat(t.Rate/float64(n), 'g', -1, 64), "--quantum", l.QuantumOrDefault().String())
		if l.MaxConns > 0 {
			args = append(args, "--max-conns", strconv.Itoa(max(l.MaxConns/n, 1)))
		}
	}
	spec := b.podSpec()
	spec.Affinity = b.loadAffinity()
	spec.Containers = []corev1.Container{{Name: LoadContainer, Image: b.k.TollImage, ImagePullPolicy: b.pull(), Command: args, Resources: resources(1, 256<<20)}}
	meta := b.meta(b.JobName(t.Index), t.Variant, ComponentLoad)
	meta.Labels[LabelTrial] = strconv.Itoa(t.Index)
	backoff, pods := int32(0), int32(n)
	deadline := int64((warmup + l.Duration.D() + l.Timeout.D() + 5*time.Minute).Seconds())
	return &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}, ObjectMeta: meta,
		Spec: batchv1.JobSpec{BackoffLimit: &backoff, Parallelism: &pods, Completions: &pods, ActiveDeadlineSeconds: &deadline,
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: maps.Clone(meta.Labels)}, Spec: spec}}}
}

// WorkJobName names the Kubernetes Job of trial index of a job
// experiment.
func (b *Builder) WorkJobName(index int) string {
	return objectName("toll-job", b.s.Name, b.run, "t"+strconv.Itoa(index))
}

// JobContainer names the container of a job experiment's job.
const JobContainer = "job"

// tollBin is where a job's container of another image than toll's finds
// toll (`toll k8s job` runs the job there), copied by an init container.
const tollBin = "/toll-bin"

// WorkJob is the Kubernetes Job of trial t of a job experiment: one pod,
// never retried, whose container runs the variant's job in its image
// through `toll k8s job`, which times it and prints its costs (JobLine)
// after the job's own output, and kills it at job.timeout. A job of
// another image than toll's runs toll from a volume an init container
// fills (`toll k8s install`).
func (b *Builder) WorkJob(t *plan.Trial) *batchv1.Job {
	v := b.variants[t.Variant]
	j := b.s.Job
	spec := b.podSpec()
	image, wrapper := b.jobImage(v), TollPath
	c := corev1.Container{Name: JobContainer, Image: image, ImagePullPolicy: b.pull()}
	if v.Job.Argv[0] != TollPath {
		wrapper = tollBin + "/toll"
		spec.Volumes = []corev1.Volume{{Name: "toll-bin", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		mount := []corev1.VolumeMount{{Name: "toll-bin", MountPath: tollBin}}
		spec.InitContainers = []corev1.Container{{Name: "toll-install", Image: b.k.TollImage, ImagePullPolicy: b.pull(),
			Command: []string{TollPath, "k8s", "install", wrapper}, VolumeMounts: mount}}
		c.VolumeMounts = mount
	}
	c.Command = append([]string{wrapper, "k8s", "job", "--timeout", j.Timeout.D().String(), "--"}, v.Job.Argv...)
	for _, kv := range v.Job.Own {
		k, val, _ := strings.Cut(kv, "=")
		c.Env = append(c.Env, corev1.EnvVar{Name: k, Value: val})
	}
	c.Env = append(c.Env, corev1.EnvVar{Name: "TOLL_RUN", Value: b.run})
	spec.Containers = []corev1.Container{c}
	meta := b.meta(b.WorkJobName(t.Index), t.Variant, ComponentJob)
	meta.Labels[LabelTrial] = strconv.Itoa(t.Index)
	backoff, one := int32(0), int32(1)
	deadline := int64((j.Timeout.D() + 5*time.Minute).Seconds())
	return &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}, ObjectMeta: meta,
		Spec: batchv1.JobSpec{BackoffLimit: &backoff, Parallelism: &one, Completions: &one, ActiveDeadlineSeconds: &deadline,
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: maps.Clone(meta.Labels)}, Spec: spec}}}
}

// VariantWarmup is the load a variant's fresh pod gets before its first
// trial's own warm-up (load.variant_warmup): a fixed time at the trial's
// load. A warm-up until the JVMs settle, or at a rate or users of its
// own, runs on one machine only (run refuses it before the run).
func (b *Builder) VariantWarmup() time.Duration { return b.s.Load.VariantWarmup.D() }

// LoadPlacement is kubernetes.load_placement, its default when unset.
func (b *Builder) LoadPlacement() string {
	return cmp.Or(b.k.LoadPlacement, scenario.LoadPlacementPreferOtherNode)
}

// loadAffinity keeps a load Job's pods off the nodes of the run's service
// pods, so that the load generator's CPU is not the services': where the
// cluster has room (prefer-other-node, a preferred anti-affinity), or
// always (other-node, a required one: the pod waits for such a node).
func (b *Builder) loadAffinity() *corev1.Affinity {
	term := corev1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelRun: b.run, LabelComponent: ComponentServices}},
		TopologyKey:   "kubernetes.io/hostname"}
	if b.LoadPlacement() == scenario.LoadPlacementOtherNode {
		return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term}}}
	}
	return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
		Weight: 100, PodAffinityTerm: term}}}}
}
