package scenario

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Kubernetes sets how `toll run --kubernetes` and `toll k8s render` run the
// scenario in a cluster. Everything else (services, variants, load,
// rounds) is the scenario's own, read the same way as for a local run.
type Kubernetes struct {
	// Namespace holds every object of a run (default "default").
	Namespace string `yaml:"namespace"`
	// TollImage is an image holding the toll binary at /toll; it runs the
	// probe, the load Job, the telemetry sink, and every service whose
	// command starts with "toll" (default DefaultTollImage).
	TollImage string `yaml:"toll_image"`
	// Images gives a service without image: its image in the cluster, by
	// service name, and a job experiment's job its image (JobImage) when
	// its command does not start with "toll".
	Images map[string]string `yaml:"images"`
	// NodeSelector is added to every pod of the run.
	NodeSelector map[string]string `yaml:"node_selector"`
	// Tolerations are added to every pod of the run.
	Tolerations []Toleration `yaml:"tolerations"`
	// Placement is "same-node" (default: every variant's pod on one node,
	// so that baseline and variant share its state, as the alternating
	// schedule does on one machine) or "node-per-variant" (each variant
	// on a node of its own, chosen by the scheduler among the nodes that
	// NodeSelector admits: give it nodes of one type).
	Placement string `yaml:"placement"`
	// LoadPlacement places each trial's load Job: "prefer-other-node"
	// (default: off the nodes of the run's service pods where the cluster
	// has room, else beside them) or "other-node" (never on a node of the
	// run's service pods: the load generator's CPU, memory bandwidth and
	// network stack are never the measured services', as with a tester
	// host of its own; the Job waits for such a node).
	LoadPlacement string `yaml:"load_placement"`
	// ServiceAccount runs the run's pods (default: the namespace's
	// default service account).
	ServiceAccount string `yaml:"service_account"`
	// LoadPods is how many pods each trial's load Job runs (default 1),
	// each sending an equal share of the rate or of the users, from the
	// same instant; their HdrHistograms are merged.
	LoadPods int `yaml:"load_pods"`
	// ImagePullPolicy is every container's imagePullPolicy: Always,
	// IfNotPresent or Never (default: Kubernetes' own, Always for a
	// :latest tag or none, else IfNotPresent). Never runs only images
	// already on the nodes, as on a cluster without a registry.
	ImagePullPolicy string `yaml:"image_pull_policy"`
}

// JobImage is the key of kubernetes.images that names the image of a job
// experiment's job, where its command does not start with "toll".
const JobImage = "job"

// PullPolicies are the values of kubernetes.image_pull_policy.
var PullPolicies = []string{"Always", "IfNotPresent", "Never"}

// MaxLoadPods bounds kubernetes.load_pods: one generator sends 100k req/s
// and more, so 64 pods are far beyond any load a scenario needs, while
// each costs the cluster a pod per trial.
const MaxLoadPods = 64

// Toleration is a pod's toleration of a node taint (the Kubernetes API's
// fields).
type Toleration struct {
	Key      string `yaml:"key"`
	Operator string `yaml:"operator"`
	Value    string `yaml:"value"`
	Effect   string `yaml:"effect"`
}

// Placements of a run's pods (kubernetes.placement).
const (
	PlacementSameNode       = "same-node"
	PlacementNodePerVariant = "node-per-variant"
)

// Load placements of a run's load Jobs (kubernetes.load_placement).
const (
	LoadPlacementPreferOtherNode = "prefer-other-node"
	LoadPlacementOtherNode       = "other-node"
)

// DefaultTollImage is the image of toll that a Kubernetes run uses unless
// kubernetes.toll_image names another: the one that docs/distributed.md
// builds and pushes under this name.
const DefaultTollImage = "toll:latest"

// kubeLabelRe is a Kubernetes label key's name part or a label value; a
// namespace and a service account name are DNS labels.
var (
	kubeLabelRe = regexp.MustCompile(`^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$`)
	dnsLabelRe  = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
)

// kubernetes checks and defaults the kubernetes block.
func (v *validator) kubernetes(s *Scenario) {
	k := s.Kubernetes
	if k == nil {
		return
	}
	if k.Namespace == "" {
		k.Namespace = "default"
	} else if !dnsLabelRe.MatchString(k.Namespace) {
		v.fail("kubernetes.namespace", "%q is not a Kubernetes namespace name (lower-case letters, digits and '-', at most 63)", k.Namespace)
	}
	if k.ServiceAccount != "" && !dnsLabelRe.MatchString(k.ServiceAccount) {
		v.fail("kubernetes.service_account", "%q is not a service account name (lower-case letters, digits and '-', at most 63)", k.ServiceAccount)
	}
	if k.TollImage == "" {
		k.TollImage = DefaultTollImage
	}
	switch {
	case !v.present("kubernetes.load_pods"):
		k.LoadPods = 1
	case k.LoadPods < 1 || k.LoadPods > MaxLoadPods:
		v.fail("kubernetes.load_pods", "%d is not between 1 and %d (one load generator sends 100000 req/s and more)", k.LoadPods, MaxLoadPods)
	}
	for _, st := range s.Load.Steps() {
		if st.Users > 0 && k.LoadPods > 1 && st.Users%k.LoadPods != 0 {
			v.fail("kubernetes.load_pods", "%d pods cannot share %d users evenly", k.LoadPods, st.Users)
			break
		}
	}
	if k.ImagePullPolicy != "" && !slices.Contains(PullPolicies, k.ImagePullPolicy) {
		v.fail("kubernetes.image_pull_policy", "%q is not one of %s", k.ImagePullPolicy, strings.Join(PullPolicies, ", "))
	}
	switch k.Placement {
	case "":
		k.Placement = PlacementSameNode
	case PlacementSameNode, PlacementNodePerVariant:
	default:
		v.fail("kubernetes.placement", "%q is not one of same-node, node-per-variant", k.Placement)
	}
	switch k.LoadPlacement {
	case "":
		k.LoadPlacement = LoadPlacementPreferOtherNode
	case LoadPlacementPreferOtherNode, LoadPlacementOtherNode:
	default:
		v.fail("kubernetes.load_placement", "%q is not one of %s, %s", k.LoadPlacement, LoadPlacementPreferOtherNode, LoadPlacementOtherNode)
	}
	for name, img := range k.Images {
		job := name == JobImage && s.Job != nil
		if !job && !slices.ContainsFunc(s.Services, func(svc Service) bool { return svc.Name == name }) {
			v.fail("kubernetes.images."+name, "names no service of the scenario%s", DidYouMean(name, serviceNames(s)))
		} else if img == "" {
			v.fail("kubernetes.images."+name, "is empty")
		}
	}
	for key, val := range k.NodeSelector {
		if !kubeLabelRe.MatchString(val) {
			v.fail("kubernetes.node_selector."+key, "%q is not a Kubernetes label value (at most 63 letters, digits, '-', '_', '.')", val)
		}
	}
	for i, t := range k.Tolerations {
		if t.Operator != "" && t.Operator != "Equal" && t.Operator != "Exists" {
			v.fail(fmt.Sprintf("kubernetes.tolerations[%d]", i)+".operator", "%q is not one of Equal, Exists", t.Operator)
		}
		if t.Effect != "" && !slices.Contains([]string{"NoSchedule", "PreferNoSchedule", "NoExecute"}, t.Effect) {
			v.fail(fmt.Sprintf("kubernetes.tolerations[%d]", i)+".effect", "%q is not one of NoSchedule, PreferNoSchedule, NoExecute", t.Effect)
		}
	}
}
