package kube

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Object names one Kubernetes object toll deleted.
type Object struct {
	Kind, Name string
	// Run is its LabelRun value.
	Run string
}

func (o Object) String() string { return o.Kind + "/" + o.Name }

// DeleteSelected deletes the Jobs, pods and Services in namespace that
// selector selects (Jobs first, so that their controller makes no new
// pod), and returns what it deleted.
func DeleteSelected(ctx context.Context, c kubernetes.Interface, namespace, selector string) ([]Object, error) {
	var out []Object
	var errs []error
	opts := metav1.ListOptions{LabelSelector: selector}
	bg := metav1.DeletePropagationBackground
	del := func(kind, name, run string, f func() error) {
		if err := f(); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete %s/%s: %w", kind, name, err))
			return
		}
		out = append(out, Object{Kind: kind, Name: name, Run: run})
	}
	jobs, err := c.BatchV1().Jobs(namespace).List(ctx, opts)
	if err != nil {
		errs = append(errs, fmt.Errorf("list Jobs: %w", err))
	} else {
		for _, j := range jobs.Items {
			del("job", j.Name, j.Labels[LabelRun], func() error {
				return c.BatchV1().Jobs(namespace).Delete(ctx, j.Name, metav1.DeleteOptions{PropagationPolicy: &bg})
			})
		}
	}
	pods, err := c.CoreV1().Pods(namespace).List(ctx, opts)
	if err != nil {
		errs = append(errs, fmt.Errorf("list pods: %w", err))
	} else {
		for _, p := range pods.Items {
			del("pod", p.Name, p.Labels[LabelRun], func() error { return c.CoreV1().Pods(namespace).Delete(ctx, p.Name, metav1.DeleteOptions{}) })
		}
	}
	svcs, err := c.CoreV1().Services(namespace).List(ctx, opts)
	if err != nil {
		errs = append(errs, fmt.Errorf("list Services: %w", err))
	} else {
		for _, s := range svcs.Items {
			del("service", s.Name, s.Labels[LabelRun], func() error { return c.CoreV1().Services(namespace).Delete(ctx, s.Name, metav1.DeleteOptions{}) })
		}
	}
	return out, errors.Join(errs...)
}

// GCOptions choose which runs' objects GC deletes.
type GCOptions struct {
	// Run deletes the objects of this run (a LabelRun value) only.
	Run string
	// All deletes the objects of every run of toll in the namespace,
	// running ones included.
	All bool
	// Host is this machine's host name: without Run or All, GC deletes
	// the objects of runs started from this machine whose toll is gone.
	Host string
}

// GC deletes leftovers of toll's runs in namespace: by default those of
// runs started on this machine (LabelHost) whose toll process is gone,
// which a run that ended any other way deletes itself. It returns what it
// deleted and the runs it kept, as RUN@HOST (started elsewhere, or still
// running).
func GC(ctx context.Context, c kubernetes.Interface, namespace string, opt GCOptions) (deleted []Object, kept []string, err error) {
	switch {
	case opt.Run != "":
		deleted, err = DeleteSelected(ctx, c, namespace, LabelRun+"="+opt.Run)
		return deleted, nil, err
	case opt.All:
		deleted, err = DeleteSelected(ctx, c, namespace, LabelManagedBy+"="+ManagedBy+","+LabelRun)
		return deleted, nil, err
	}
	// A run is its label and the host it started from: two machines
	// may have had a toll with the same pid and start time.
	type runOn struct{ run, host string }
	runs := map[runOn]bool{}
	opts := metav1.ListOptions{LabelSelector: LabelManagedBy + "=" + ManagedBy + "," + LabelRun}
	pods, err := c.CoreV1().Pods(namespace).List(ctx, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("list pods: %w", err)
	}
	for _, p := range pods.Items {
		runs[runOn{p.Labels[LabelRun], p.Labels[LabelHost]}] = true
	}
	svcs, err := c.CoreV1().Services(namespace).List(ctx, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("list Services: %w", err)
	}
	for _, s := range svcs.Items {
		runs[runOn{s.Labels[LabelRun], s.Labels[LabelHost]}] = true
	}
	jobs, err := c.BatchV1().Jobs(namespace).List(ctx, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("list Jobs: %w", err)
	}
	for _, j := range jobs.Items {
		runs[runOn{j.Labels[LabelRun], j.Labels[LabelHost]}] = true
	}
	var errs []error
	for ro := range runs {
		id, perr := ParseRunLabel(ro.run)
		if ro.host == "" || ro.host != labelValue(opt.Host) || perr != nil || id.Alive() {
			kept = append(kept, ro.run+"@"+cmp.Or(ro.host, "?"))
			continue
		}
		d, err := DeleteSelected(ctx, c, namespace, LabelRun+"="+ro.run+","+LabelHost+"="+ro.host)
		deleted = append(deleted, d...)
		errs = append(errs, err)
	}
	return deleted, kept, errors.Join(errs...)
}
