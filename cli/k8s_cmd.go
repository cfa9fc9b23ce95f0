package cli

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tollperf/toll/kube"
	"github.com/tollperf/toll/scenario"
)

// kubeFlags choose the cluster of `toll run --kubernetes` and `toll k8s gc`.
type kubeFlags struct {
	on         bool
	kubeconfig string
	context    string
}

func (k *kubeFlags) addFlags(fl *pflag.FlagSet) {
	fl.StringVar(&k.kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG or ~/.kube/config)")
	fl.StringVar(&k.context, "kube-context", "", "kubeconfig context (default the current one)")
}

// The environment variables that give the flags a run on a cluster
// without a registry needs their defaults: scripts/kube-cluster.sh env
// exports them for the project's test cluster, whose images are imported
// (toll:dev, never pulled) and which runs no duet.
const (
	envTollImage  = "TOLL_KUBE_TOLL_IMAGE"        // --toll-image
	envPullPolicy = "TOLL_KUBE_IMAGE_PULL_POLICY" // --image-pull-policy
	envSequential = "TOLL_KUBE_SEQUENTIAL"        // --sequential, with --kubernetes
)

// kubeImages set, for one run or render, the images a scenario's
// kubernetes block names: toll's image and the pull policy, for a cluster
// whose images are not where the file says (a test cluster without a
// registry).
type kubeImages struct {
	tollImage  string
	pullPolicy string
}

func (k *kubeImages) addFlags(fl *pflag.FlagSet) {
	fl.StringVar(&k.tollImage, "toll-image", os.Getenv(envTollImage), "toll's image in the cluster, in place of kubernetes.toll_image (default $"+envTollImage+")")
	fl.StringVar(&k.pullPolicy, "image-pull-policy", os.Getenv(envPullPolicy), "every container's imagePullPolicy (Always, IfNotPresent, Never), in place of kubernetes.image_pull_policy (default $"+envPullPolicy+")")
}

// kubeSequential returns whether a duet scenario runs on a cluster one
// variant at a time: the --sequential flag when given (set), else
// $TOLL_KUBE_SEQUENTIAL, a boolean (1, true, 0, false); unset is false.
func kubeSequential(fl *pflag.FlagSet, set bool) (bool, error) {
	if fl.Changed("sequential") {
		return set, nil
	}
	v := os.Getenv(envSequential)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("$%s=%q: want true or false", envSequential, v)
	}
	return b, nil
}

// apply puts the flags' images in s's kubernetes block.
func (k *kubeImages) apply(s *scenario.Scenario) error {
	if k.pullPolicy != "" && !slices.Contains(scenario.PullPolicies, k.pullPolicy) {
		return fmt.Errorf("--image-pull-policy %q: want one of %s", k.pullPolicy, strings.Join(scenario.PullPolicies, ", "))
	}
	if k.tollImage == "" && k.pullPolicy == "" {
		return nil
	}
	kb := scenario.Kubernetes{Namespace: "default", TollImage: scenario.DefaultTollImage, Placement: scenario.PlacementSameNode,
		LoadPlacement: scenario.LoadPlacementPreferOtherNode, LoadPods: 1}
	if s.Kubernetes != nil {
		kb = *s.Kubernetes
	}
	kb.TollImage = cmp.Or(k.tollImage, kb.TollImage)
	kb.ImagePullPolicy = cmp.Or(k.pullPolicy, kb.ImagePullPolicy)
	s.Kubernetes = &kb
	return nil
}

// client connects to the cluster the kubeconfig names, as kubectl does.
func (k *kubeFlags) client() (kubernetes.Interface, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if k.kubeconfig != "" {
		rules.ExplicitPath = k.kubeconfig
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: k.context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubernetes: %w", err)
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: %w", err)
	}
	return c, nil
}

// newK8sCmd returns `toll k8s`: render a scenario's objects, remove a dead
// run's leftovers, and the commands toll runs inside the cluster.
func newK8sCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "k8s",
		Short: "Kubernetes: render a scenario's objects, remove leftovers, and toll's in-cluster commands",
		Long: `toll run --kubernetes runs a scenario in a cluster; toll k8s render prints the
objects it would create, and toll k8s gc removes what runs whose CLI died left.
probe, load, sink, ready, job and install are the commands toll runs inside the
cluster. See docs/distributed.md.`,
	}
	cmd.AddCommand(newK8sRenderCmd(), newK8sGCCmd(), newK8sProbeCmd(), newK8sLoadCmd(), newK8sSinkCmd(), newK8sReadyCmd(),
		newK8sJobCmd(), newK8sInstallCmd())
	return cmd
}

func newK8sJobCmd() *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "job [--timeout D] -- COMMAND [ARG]...",
		Short: "In a job's pod: run a job experiment's job, then print its wall time, CPU time and exit as one JSON line",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := scenario.CheckDuration("job.timeout", timeout); err != nil || timeout <= 0 {
				return &exitError{ExitUsage, fmt.Errorf("--timeout %s: want a positive duration", timeout)}
			}
			if err := kube.Job(cmd.Context(), cmd.OutOrStdout(), args, timeout, kube.StopGrace); err != nil {
				return &exitError{ExitFailure, err}
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", scenario.DefaultJobTimeout, "kill the job after this long")
	return cmd
}

func newK8sInstallCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "install PATH",
		Short: "In an init container: copy toll's binary to PATH, for a job's container of another image",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := kube.Install(args[0]); err != nil {
				return &exitError{ExitFailure, err}
			}
			return nil
		},
	}
}

func newK8sRenderCmd() *cobra.Command {
	var opt kube.RenderOptions
	var sequential bool
	var images kubeImages
	cmd := &cobra.Command{
		Use:   "render FILE",
		Short: "Print the Kubernetes objects a run of the scenario creates, per variant and per round",
		Long: `render prints, as YAML, every object toll run --kubernetes creates for the
scenario, in the order it creates them: each variant's telemetry sink and
Services, the pod of every start of a variant's services (with the probe
container), and each trial's load Job. --rbac adds the ServiceAccount, Role and
RoleBinding that toll's CLI needs in the namespace.`,
		Example: `  toll k8s render --sequential examples/quickstart.yaml
  toll k8s render --sequential --rbac examples/quickstart.yaml | kubectl apply --dry-run=server -f -`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sequential, err := kubeSequential(cmd.Flags(), sequential)
			if err != nil {
				return &exitError{ExitUsage, err}
			}
			s, err := scenario.ReadWith(args[0], scenario.Overrides{Sequential: sequential})
			if err != nil {
				return &exitError{ExitUsage, err}
			}
			if err := images.apply(s); err != nil {
				return &exitError{ExitUsage, err}
			}
			if err := kube.Render(cmd.OutOrStdout(), s, opt); err != nil {
				return &exitError{ExitUsage, err}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&opt.RBAC, "rbac", false, "also print the ServiceAccount, Role and RoleBinding toll needs")
	cmd.Flags().BoolVar(&sequential, "sequential", false, "render a duet scenario as run one variant at a time (toll run --kubernetes --sequential): a cluster runs no duet (default $"+envSequential+")")
	cmd.Flags().Int64Var(&opt.Seed, "seed", 0, "order the trials as a run with this seed (default the scenario's)")
	images.addFlags(cmd.Flags())
	return cmd
}

func newK8sGCCmd() *cobra.Command {
	var k kubeFlags
	var opt kube.GCOptions
	var namespace string
	cmd := &cobra.Command{
		Use:   "gc",
		Short: "Delete the Kubernetes objects that runs of toll whose CLI died left behind",
		Long: `gc deletes the pods, Services and Jobs labelled by runs of toll
(app.kubernetes.io/managed-by=toll, toll.dev/run=<pid>-<start>) that were started
from this machine and whose toll process is gone; runs started elsewhere, and
runs still going, are kept and listed. --run deletes one run's objects, --all
every run's. A run that ends, is interrupted or fails deletes its own.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := k.client()
			if err != nil {
				return &exitError{ExitUsage, err}
			}
			opt.Host, _ = os.Hostname()
			deleted, kept, err := kube.GC(cmd.Context(), c, namespace, opt)
			w := cmd.OutOrStdout()
			for _, o := range deleted {
				fmt.Fprintf(w, "deleted %s (run %s)\n", o, o.Run)
			}
			if len(kept) > 0 {
				fmt.Fprintf(w, "kept the objects of %d runs started elsewhere or still running (%s); --run or --all deletes them\n", len(kept), strings.Join(kept, ", "))
			}
			if err != nil {
				return &exitError{ExitFailure, err}
			}
			if len(deleted) == 0 {
				fmt.Fprintln(w, "nothing to delete")
			}
			return nil
		},
	}
	fl := cmd.Flags()
	k.addFlags(fl)
	fl.StringVarP(&namespace, "namespace", "n", "default", "namespace to clean")
	fl.StringVar(&opt.Run, "run", "", "delete this run's objects (its toll.dev/run label)")
	fl.BoolVar(&opt.All, "all", false, "delete the objects of every run of toll in the namespace, running ones too")
	return cmd
}

func newK8sProbeCmd() *cobra.Command {
	var interval time.Duration
	var startup string
	cmd := &cobra.Command{
		Use:   "probe",
		Short: "In a pod: print each service's CPU, memory, threads and files every interval, as JSON lines",
		Long: `probe runs in toll's probe container, in a pod that shares its process
namespace: every --interval it samples the processes whose environment carries
this run's TOLL_RUN and a TOLL_SERVICE, grouped by service, and prints one JSON
line per service.

With --startup (the pod of one cold start of a start-up experiment) it also
runs each service's readiness check every 25 ms from its own start, and once
all have passed prints one line per service: its first process's launch, when
its port opened and its check passed, its CPU and memory then, and its JVM's
start-up counters.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := scenario.CheckDuration("sample", interval); err != nil || interval < scenario.MinSample {
				return &exitError{ExitUsage, fmt.Errorf("--interval %s: want at least %s", interval, scenario.MinSample)}
			}
			rl := os.Getenv("TOLL_RUN")
			if rl == "" {
				return &exitError{ExitUsage, errors.New("probe: TOLL_RUN is not set: it names the run whose services to sample")}
			}
			var starts []kube.StartCheck
			if startup != "" {
				if err := json.Unmarshal([]byte(startup), &starts); err != nil {
					return &exitError{ExitUsage, fmt.Errorf("--startup: %w", err)}
				}
				for i, c := range starts {
					if c.Service == "" || (c.HTTP == "") == (c.TCP == "") {
						return &exitError{ExitUsage, fmt.Errorf("--startup[%d]: want a service and one of http or tcp", i)}
					}
				}
			}
			if err := kube.Probe(cmd.Context(), cmd.OutOrStdout(), interval, rl, starts); err != nil {
				return &exitError{ExitFailure, err}
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&interval, "interval", time.Second, "time between samples")
	cmd.Flags().StringVar(&startup, "startup", "", `time each service's start, JSON: [{"service","http","tcp"}]`)
	return cmd
}

func newK8sLoadCmd() *cobra.Command {
	var spec kube.LoadSpec
	var requests, notBefore string
	cmd := &cobra.Command{
		Use:   "load --requests JSON (--rate N | --users N)",
		Short: "In a Job: send one trial's load and print its totals and per-second histograms as one JSON line",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rs, err := kube.ParseLoadSpec(requests)
			if err != nil {
				return &exitError{ExitUsage, err}
			}
			spec.Requests = rs
			if notBefore != "" {
				if spec.NotBefore, err = time.Parse(time.RFC3339Nano, notBefore); err != nil {
					return &exitError{ExitUsage, fmt.Errorf("--not-before: %w", err)}
				}
				if wait := time.Until(spec.NotBefore); wait > time.Hour {
					return &exitError{ExitUsage, fmt.Errorf("--not-before %s is %s away: more than an hour", notBefore, wait.Round(time.Second))}
				}
			}
			if (spec.Rate > 0) == (spec.Users > 0) {
				return &exitError{ExitUsage, errors.New("give --rate N (open model) or --users N (closed model)")}
			}
			for _, d := range []struct {
				field string
				d     time.Duration
			}{{"load.warmup", spec.Warmup}, {"load.duration", spec.Duration}, {"load.timeout", spec.Timeout}, {"load.think", spec.Think}, {"load.ramp", spec.Ramp}} {
				if err := scenario.CheckDuration(d.field, d.d); err != nil {
					return &exitError{ExitUsage, err}
				}
			}
			if err := kube.Load(cmd.Context(), cmd.OutOrStdout(), spec); err != nil {
				return &exitError{ExitFailure, err}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&requests, "requests", "", `the request mix, JSON: [{"name","method","url","headers","body","weight"}]`)
	fl.Float64Var(&spec.Rate, "rate", 0, "open model: requests per second")
	fl.IntVar(&spec.Users, "users", 0, "closed model: concurrent users")
	fl.DurationVar(&spec.Think, "think", 0, "closed model: think time")
	fl.BoolVar(&spec.ThinkExp, "think-exponential", false, "closed model: exponential think times")
	fl.DurationVar(&spec.Ramp, "ramp", 0, "closed model: start users over this long")
	fl.DurationVar(&spec.Warmup, "warmup", 0, "load sent before the measured window")
	fl.DurationVar(&spec.Duration, "duration", 10*time.Second, "measured window")
	fl.DurationVar(&spec.Timeout, "timeout", 10*time.Second, "bound on each request")
	fl.IntVar(&spec.MaxConns, "max-conns", 0, "open model: cap on requests in flight")
	fl.DurationVar(&spec.Quantum, "quantum", 0, "open model: release grid (0: each request at its own time)")
	fl.StringVar(&notBefore, "not-before", "", "RFC 3339 time before which the load does not start (the pods of one Job share it)")
	return cmd
}

func newK8sSinkCmd() *cobra.Command {
	var addr string
	var interval time.Duration
	cmd := &cobra.Command{
		Use:   "sink",
		Short: "In a pod: receive agents' telemetry and print the counts every interval as JSON lines",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := kube.Sink(cmd.Context(), cmd.OutOrStdout(), addr, interval); err != nil {
				return &exitError{ExitFailure, err}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", fmt.Sprintf(":%d", kube.SinkPort), "address to listen on")
	cmd.Flags().DurationVar(&interval, "interval", time.Second, "time between lines")
	return cmd
}

func newK8sReadyCmd() *cobra.Command {
	var urls, addrs []string
	cmd := &cobra.Command{
		Use:   "ready [--http URL]... [--tcp ADDR]...",
		Short: "In a pod: exit 0 when every URL answers 2xx/3xx and every address accepts (a readiness probe)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := kube.Ready(cmd.Context(), urls, addrs); err != nil {
				return &exitError{ExitFailure, err}
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&urls, "http", nil, "URL that must answer 2xx or 3xx")
	cmd.Flags().StringArrayVar(&addrs, "tcp", nil, "host:port that must accept a connection")
	return cmd
}
