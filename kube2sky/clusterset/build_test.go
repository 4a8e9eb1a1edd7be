package clusterset

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	cs "github.com/kubesky/kubesky/contract/clusterset"
)

var created = time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)

func serviceExport() *mcsv1beta1.ServiceExport {
	return &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db", CreationTimestamp: metav1.NewTime(created)}}
}

func headless() *corev1.Service {
	return &corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone,
		Ports: []corev1.ServicePort{{Name: "sql", Protocol: corev1.ProtocolTCP, Port: 5432}}}}
}

func TestAHeadlessExportHoldsTheReadyEndpointsByName(t *testing.T) {
	v4 := &discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4, Endpoints: []discoveryv1.Endpoint{
		{Addresses: []string{"10.1.0.5"}, Hostname: ptr.To("db-0")},
		{Addresses: []string{"10.1.0.6"}}, // no condition: ready
		{Addresses: []string{"10.1.0.7"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false)}},
		{Addresses: []string{"10.1.0.8"}, Hostname: ptr.To("Not_A_Label")},
	}}
	v6 := &discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv6, Endpoints: []discoveryv1.Endpoint{
		{Addresses: []string{"fd00::5"}, Hostname: ptr.To("db-0")},
	}}
	e, err := buildExport(serviceExport(), headless(), []*discoveryv1.EndpointSlice{v4, v6})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"created":"2026-11-29T01:00:00Z","type":"Headless","ports":[{"name":"sql","protocol":"TCP","port":5432}],` +
		`"endpoints":[{"hostname":"10-1-0-6","addresses":["10.1.0.6"]},{"hostname":"10-1-0-8","addresses":["10.1.0.8"]},` +
		`{"hostname":"db-0","addresses":["10.1.0.5","fd00::5"]}]}`
	if got := string(e.Encode()); got != want {
		t.Errorf("export\n%s\nwant\n%s", got, want)
	}
}

func TestAClusterIPServiceIsExportedAsClusterSetIP(t *testing.T) {
	svc := headless()
	svc.Spec.ClusterIP = "10.96.0.7"
	e, err := buildExport(serviceExport(), svc, nil)
	if err != nil || e.Type != cs.ClusterSetIP {
		t.Errorf("export %+v, %v; want type ClusterSetIP", e, err)
	}
}

func TestAnExportCarriesTheTrafficPolicyAndDistribution(t *testing.T) {
	svc := headless()
	svc.Spec.ClusterIP = "10.96.0.7"
	svc.Spec.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyLocal)
	svc.Spec.TrafficDistribution = ptr.To("PreferClose")
	e, err := buildExport(serviceExport(), svc, nil)
	if err != nil || e.InternalTrafficPolicy != "Local" || e.TrafficDistribution != "PreferClose" {
		t.Errorf("export %+v, %v; want Local and PreferClose", e, err)
	}
	svc.Spec.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyCluster)
	if e, _ := buildExport(serviceExport(), svc, nil); e.InternalTrafficPolicy != "" {
		t.Errorf("policy Cluster exported as %q, want empty (the default)", e.InternalTrafficPolicy)
	}
}

func TestAnExportWithoutItsServiceOrOfAnExternalNameIsInvalid(t *testing.T) {
	external := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.org"}}
	for svc, reason := range map[*corev1.Service]mcsv1beta1.ServiceExportConditionReason{
		nil:      mcsv1beta1.ServiceExportReasonNoService,
		external: mcsv1beta1.ServiceExportReasonInvalidServiceType,
	} {
		_, err := buildExport(serviceExport(), svc, nil)
		var invalid *invalidError
		if !errors.As(err, &invalid) || invalid.Reason != reason {
			t.Errorf("error %v, want reason %s", err, reason)
		}
	}
}

func TestTheOldestExportWinsAConflict(t *testing.T) {
	tcp := func(name string, port int) cs.Port { return cs.Port{Name: name, Protocol: "TCP", Port: port} }
	older := cs.Export{Created: created, Type: cs.Headless, Ports: []cs.Port{tcp("sql", 5432)}}
	cases := []struct {
		name   string
		own    cs.Export
		reason mcsv1beta1.ServiceExportConditionReason
		says   string
	}{
		{"same type and ports", cs.Export{Created: created.Add(time.Hour), Type: cs.Headless, Ports: []cs.Port{tcp("sql", 5432)}}, mcsv1beta1.ServiceExportReasonNoConflicts, "no conflict"},
		{"a newer other type", cs.Export{Created: created.Add(time.Hour), Type: cs.ClusterSetIP}, mcsv1beta1.ServiceExportReasonTypeConflict, "cluster own exports it as ClusterSetIP, the oldest export (cluster east) as Headless"},
		{"an older other type", cs.Export{Created: created.Add(-time.Hour), Type: cs.ClusterSetIP}, mcsv1beta1.ServiceExportReasonTypeConflict, "cluster east exports it as Headless, the oldest export (cluster own) as ClusterSetIP"},
		{"a port name on another number", cs.Export{Created: created.Add(time.Hour), Type: cs.Headless, Ports: []cs.Port{tcp("sql", 3306)}}, mcsv1beta1.ServiceExportReasonPortConflict, `cluster own's port "sql" TCP/3306`},
		{"another session affinity", cs.Export{Created: created.Add(time.Hour), Type: cs.Headless, Ports: []cs.Port{tcp("sql", 5432)}, SessionAffinity: "ClientIP"}, mcsv1beta1.ServiceExportReasonSessionAffinityConflict, "cluster own's session affinity differs from the oldest export's (cluster east)"},
		{"another affinity timeout", cs.Export{Created: created.Add(time.Hour), Type: cs.Headless, Ports: []cs.Port{tcp("sql", 5432)}, AffinityTimeout: 60}, mcsv1beta1.ServiceExportReasonSessionAffinityConfigConflict, "timeout"},
		{"other IP families", cs.Export{Created: created.Add(time.Hour), Type: cs.Headless, Ports: []cs.Port{tcp("sql", 5432)}, IPFamilies: []string{"IPv6"}}, mcsv1beta1.ServiceExportReasonIPFamilyConflict, "IP families"},
		{"another internal traffic policy", cs.Export{Created: created.Add(time.Hour), Type: cs.Headless, Ports: []cs.Port{tcp("sql", 5432)}, InternalTrafficPolicy: "Local"}, mcsv1beta1.ServiceExportReasonInternalTrafficPolicyConflict, "internal traffic policy"},
		{"another traffic distribution", cs.Export{Created: created.Add(time.Hour), Type: cs.Headless, Ports: []cs.Port{tcp("sql", 5432)}, TrafficDistribution: "PreferClose"}, mcsv1beta1.ServiceExportReasonTrafficDistributionConflict, "traffic distribution"},
		{"another named port", cs.Export{Created: created.Add(time.Hour), Type: cs.Headless, Ports: []cs.Port{tcp("metrics", 9090)}}, mcsv1beta1.ServiceExportReasonNoConflicts, "no conflict"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reason, msg := conflict("own", c.own, map[string]cs.Export{"east": older})
			if reason != c.reason || !strings.Contains(msg, c.says) {
				t.Errorf("%s: %s, want %s: %s", reason, msg, c.reason, c.says)
			}
		})
	}
}

func TestTheClusterIDComesFromTheClusterProperty(t *testing.T) {
	prop := func(v any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"value": v}}}
	}
	if id, err := clusterIDOf(prop("east")); err != nil || id != "east" {
		t.Errorf("clusterIDOf = %q, %v", id, err)
	}
	for _, bad := range []any{"East.Cluster", "", 7} {
		if _, err := clusterIDOf(prop(bad)); err == nil || !strings.Contains(err.Error(), ClusterPropertyName) {
			t.Errorf("clusterIDOf(%v) = %v, want an error naming the ClusterProperty", bad, err)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	good := Config{ClusterID: "east", Prefix: "/clusterset", LeaseTTL: 10 * time.Second, ResyncPeriod: time.Minute}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for flag, bad := range map[string]Config{
		"--cluster-id":               {ClusterID: "a.b", Prefix: "/c", LeaseTTL: 10 * time.Second, ResyncPeriod: time.Minute},
		"--clusterset-prefix":        {Prefix: "c", LeaseTTL: 10 * time.Second, ResyncPeriod: time.Minute},
		"--clusterset-lease-ttl":     {Prefix: "/c", LeaseTTL: 1500 * time.Millisecond, ResyncPeriod: time.Minute},
		"--clusterset-resync-period": {Prefix: "/c", LeaseTTL: 10 * time.Second},
	} {
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("%+v: %v, want an error naming %s", bad, err, flag)
		}
	}
}
