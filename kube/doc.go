// Package kube runs a scenario in a Kubernetes cluster: the Kubernetes
// implementation of backend.Backend, backend.Startups and backend.Jobs,
// beside package local's backend of this machine.
//
// Each variant's services become the containers of one pod per start
// (Builder.Pod), beside a toll probe container that shares the pod's
// process namespace and prints the same per-second samples as a local run
// (Probe); each trial's load is `toll k8s load` in a Job (Load); each
// variant's telemetry goes to a toll sink in a pod of its own behind a
// Service (Sink). A start-up experiment's start is a pod of its own
// (Builder.StartupPod) whose probe, first in the pod, times each service's
// start (StartLine); a job experiment's run of the job is a Kubernetes Job
// (Builder.WorkJob) timed by `toll k8s job` in its container (Job,
// JobLine). Runner creates them through client-go, waits on their
// phases, reads their output back through the API (pod logs) into the
// usual trial records, and deletes every object it created, which all
// carry the run's labels (Labels), when the run ends however it ends; GC
// removes what runs whose CLI died left behind. Render prints the same
// objects for a person to review or apply.
package kube
