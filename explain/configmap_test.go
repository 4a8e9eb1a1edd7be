package explain

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestTheCorefileIsReadFromItsConfigMap(t *testing.T) {
	kube := fake.NewClientset(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "coredns"},
		Data:       map[string]string{"Corefile": ".:53 {\n  errors\n}\n"},
	})
	if got, err := configMapValue(t.Context(), kube, "kube-system", "coredns", "Corefile"); err != nil || got != ".:53 {\n  errors\n}\n" {
		t.Fatalf("configMapValue = %q, %v", got, err)
	}
	for _, c := range []struct{ name, key, want string }{
		{"missing", "Corefile", `ConfigMap kube-system/missing: configmaps "missing" not found`},
		{"coredns", "corefile", `ConfigMap kube-system/coredns has no key "corefile"`},
	} {
		if _, err := configMapValue(t.Context(), kube, "kube-system", c.name, c.key); err == nil || err.Error() != c.want {
			t.Errorf("%s %s: %v, want %q", c.name, c.key, err, c.want)
		}
	}
}
