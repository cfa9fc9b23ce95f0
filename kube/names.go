package kube

import (
	"fmt"
	"hash/fnv"
	"regexp"
	"strconv"
	"strings"

	"github.com/tollperf/toll/runid"
)

// Labels every object of a run carries, so that the run's end, or GC, finds
// all of them from the labels alone.
const (
	// LabelManagedBy is Kubernetes' recommended label; its value is
	// ManagedBy.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedBy is LabelManagedBy's value on toll's objects.
	ManagedBy = "toll"
	// LabelRun names the run: its runid as "<pid>-<start>" (RunLabel).
	LabelRun = "toll.dev/run"
	// LabelHost is the host name of the machine where toll's CLI ran,
	// where GC can tell whether the run still lives.
	LabelHost = "toll.dev/host"
	// LabelScenario is the scenario's name.
	LabelScenario = "toll.dev/scenario"
	// LabelVariant is the variant an object serves.
	LabelVariant = "toll.dev/variant"
	// LabelComponent is what the object is: ComponentServices,
	// ComponentLoad, ComponentSink or ComponentJob.
	LabelComponent = "toll.dev/component"
	// LabelStart numbers the starts of a variant's services.
	LabelStart = "toll.dev/start"
	// LabelTrial is a load Job's trial index.
	LabelTrial = "toll.dev/trial"
)

// Components of a run (LabelComponent).
const (
	ComponentServices = "services"
	ComponentLoad     = "load"
	ComponentSink     = "sink"
	// ComponentJob is a job experiment's job.
	ComponentJob = "job"
)

// Container names toll gives its own containers.
const (
	ProbeContainer = "toll-probe"
	LoadContainer  = "toll-load"
	SinkContainer  = "toll-sink"
)

// SinkPort is the port of each variant's telemetry sink Service.
const SinkPort = 4318

// FirstPort is the port of a scenario's first ${port:NAME}: a pod has a
// network of its own, so ports are fixed, one per name, from here on.
const FirstPort = 8080

// TollPath is the toll binary in the toll image.
const TollPath = "/toll"

// RunLabel is the value of LabelRun for a run: its runid with '-' for '@'
// (a label value cannot hold '@').
func RunLabel(id runid.ID) string { return fmt.Sprintf("%d-%d", id.Pid, id.Start) }

// ParseRunLabel reads a LabelRun value back into the runid it names.
func ParseRunLabel(v string) (runid.ID, error) {
	p, s, ok := strings.Cut(v, "-")
	if !ok {
		return runid.ID{}, fmt.Errorf("run label %q: want <pid>-<start>", v)
	}
	return runid.Parse(p + "@" + s)
}

var notDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// objectName joins parts into a DNS-1123 label (what a Service's name must
// be, the strictest of the names toll makes): lower-case letters, digits
// and '-', at most 63; a longer name keeps its head and a hash of the whole.
func objectName(parts ...string) string {
	var clean []string
	for _, p := range parts {
		p = strings.Trim(notDNS.ReplaceAllString(strings.ToLower(p), "-"), "-")
		if p != "" {
			clean = append(clean, p)
		}
	}
	n := strings.Join(clean, "-")
	if len(n) <= 63 {
		return n
	}
	h := fnv.New32a()
	h.Write([]byte(n))
	sum := strconv.FormatUint(uint64(h.Sum32()), 36)
	return strings.TrimRight(n[:62-len(sum)], "-") + "-" + sum
}

// labelValue makes s a valid label value (at most 63 letters, digits, '-',
// '_' or '.', starting and ending with a letter or digit).
func labelValue(s string) string {
	s = regexp.MustCompile(`[^A-Za-z0-9_.-]+`).ReplaceAllString(s, "-")
	if len(s) > 63 {
		s = s[:63]
	}
	return strings.Trim(s, "-_.")
}
