package kube

import (
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RBACName names the Role, RoleBinding and ServiceAccount that RBAC makes.
const RBACName = "toll"

// RBAC returns what toll's CLI needs in a namespace, as a ServiceAccount
// (for a CLI that runs in the cluster, such as a CI job's pod), a Role
// with exactly the verbs toll uses, and the RoleBinding between them: it
// creates, watches and deletes pods, Services and Jobs, and reads pods'
// logs (the probe's, the load's and the sinks' output). Nothing
// cluster-wide: the nodes the pods land on are read from the pods.
func RBAC(namespace string) (*corev1.ServiceAccount, *rbacv1.Role, *rbacv1.RoleBinding) {
	meta := metav1.ObjectMeta{Name: RBACName, Namespace: namespace, Labels: map[string]string{LabelManagedBy: ManagedBy}}
	sa := &corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}, ObjectMeta: meta}
	verbs := []string{"get", "list", "watch", "create", "delete"}
	role := &rbacv1.Role{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"}, ObjectMeta: meta,
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods", "services"}, Verbs: verbs},
			{APIGroups: []string{""}, Resources: []string{"pods/log"}, Verbs: []string{"get"}},
			{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: verbs},
		}}
	binding := &rbacv1.RoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"}, ObjectMeta: meta,
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: RBACName, Namespace: namespace}},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: RBACName}}
	return sa, role, binding
}
