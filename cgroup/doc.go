// Package cgroup runs toll's services in cgroups that toll owns and reads
// what they cost from those cgroups.
//
// Both cgroup versions are real targets:
//
//   - v2 (unified hierarchy mounted at /sys/fs/cgroup with the cpu, cpuset
//     and memory controllers available): toll's subtree is
//     /sys/fs/cgroup/toll/<tree>/<group>. toll enables +cpu +cpuset +memory
//     in cgroup.subtree_control of /sys/fs/cgroup, /sys/fs/cgroup/toll and
//     the tree directory so every group gets all three controllers.
//   - v1 (the cpu, cpuacct, cpuset and memory controllers mounted as legacy
//     hierarchies, e.g. /sys/fs/cgroup/{cpu,cpuacct,cpuset,memory}, possibly
//     with cpu and cpuacct co-mounted): toll's subtree is
//     <mount>/toll/<tree>/<group> in each of the four hierarchies.
//
// In both cases the subtree hangs off the root of the hierarchy as toll (which
// must run as root) sees it, not off toll's own cgroup, so the limits and the
// accounting of the services do not depend on where toll itself happens to
// run.
//
// Groups are created and their limits applied with
// github.com/containerd/cgroups/v3 (cgroup1 and cgroup2). Reading the cost
// (Stat), listing processes, killing, removing and joining a group are written
// by hand: Stat is called once per second per service and reads only the few
// files it needs into a stack buffer, Kill must never reap processes that
// belong to the caller, and removal has to go children first with a retry
// while killed processes exit.
//
// A typical run:
//
//	v, err := cgroup.Detect()           // V1 or V2, or why neither is usable
//	tree, err := cgroup.NewTree("demo-1234")
//	defer tree.Close()
//	g, err := tree.NewGroup("baseline.consumer", cgroup.Limits{CPUs: "1", CPULimit: 0.5})
//	// start the service through a shim that calls cgroup.Enter(g.ProcsFiles())
//	// right before exec, then once per second:
//	st, err := g.Stat()
//	// at the end:
//	g.Kill()
//	g.Delete()
package cgroup
