package records

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestServiceFromKeepsWhatDNSNeeds(t *testing.T) {
	in := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", Annotations: map[string]string{"a": "b"}},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10", "fd00::a"},
			Ports:                    []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}},
			PublishNotReadyAddresses: true,
		},
	}
	want := Service{
		Namespace: "default", Name: "web", Type: "ClusterIP", ClusterIPs: []string{"10.96.0.10", "fd00::a"},
		Ports: []Port{{Name: "http", Protocol: "TCP", Port: 80}}, PublishNotReadyAddresses: true,
	}
	if got := ServiceFrom(in); !reflect.DeepEqual(got, want) {
		t.Errorf("ServiceFrom = %+v, want %+v", got, want)
	}
}

func TestServiceFromFallsBackToClusterIP(t *testing.T) {
	in := &corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: "None"}}
	if got := ServiceFrom(in); !got.Headless() {
		t.Errorf("a Service with only spec.clusterIP None is not headless: %+v", got)
	}
}

func TestEndpointSliceFromKeepsWhatDNSNeeds(t *testing.T) {
	trigger := time.Date(2025, 1, 2, 3, 4, 5, 600000000, time.UTC)
	in := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "default", Name: "db-abc",
			Labels:      map[string]string{discoveryv1.LabelServiceName: "db", "x": "y"},
			Annotations: map[string]string{corev1.EndpointsLastChangeTriggerTime: trigger.Format(time.RFC3339Nano)},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("pg"), Protocol: ptr.To(corev1.ProtocolUDP), Port: ptr.To[int32](5432)}, {}},
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"10.244.1.7"}, Hostname: ptr.To("db-0"), NodeName: ptr.To("node-1")},
			{Addresses: []string{"10.244.1.8"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false)}},
			{Addresses: []string{"10.244.1.9"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}},
		},
	}
	want := EndpointSlice{
		Namespace: "default", Name: "db-abc", Service: "db", AddressType: "IPv4",
		Ports: []Port{{Name: "pg", Protocol: "UDP", Port: 5432}, {}},
		Endpoints: []Endpoint{
			{Addresses: []string{"10.244.1.7"}, Hostname: "db-0", Ready: true},
			{Addresses: []string{"10.244.1.8"}, Ready: false},
			{Addresses: []string{"10.244.1.9"}, Ready: true},
		},
		TriggerTime: trigger,
	}
	got := EndpointSliceFrom(in)
	if !got.TriggerTime.Equal(want.TriggerTime) {
		t.Errorf("trigger time %v, want %v", got.TriggerTime, want.TriggerTime)
	}
	got.TriggerTime = want.TriggerTime
	if !reflect.DeepEqual(got, want) {
		t.Errorf("EndpointSliceFrom =\n %+v\nwant\n %+v", got, want)
	}
	if got.ServiceKey() != "default/db" {
		t.Errorf("ServiceKey = %s", got.ServiceKey())
	}
}

// Pod names are kept only when asked for, and only for endpoints without a
// hostname: the informer's cache holds no string it does not need.
func TestEndpointSliceWithPodNamesFromKeepsThePodOfAnEndpointWithoutHostname(t *testing.T) {
	in := &discoveryv1.EndpointSlice{
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"10.244.1.7"}, Hostname: ptr.To("db-0"), TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "db-0"}},
			{Addresses: []string{"10.244.1.8"}, TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "db-7f9c"}},
			{Addresses: []string{"10.244.1.9"}},
		},
	}
	if got := EndpointSliceFrom(in).Endpoints[1].PodName; got != "" {
		t.Errorf("EndpointSliceFrom kept the pod name %q", got)
	}
	got := EndpointSliceWithPodNamesFrom(in).Endpoints
	if got[0].PodName != "" || got[1].PodName != "db-7f9c" || got[2].PodName != "" {
		t.Errorf("pod names %q, %q, %q; want \"\", db-7f9c, \"\"", got[0].PodName, got[1].PodName, got[2].PodName)
	}
}

func TestEndpointSliceFromIgnoresAMalformedTriggerTime(t *testing.T) {
	in := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{corev1.EndpointsLastChangeTriggerTime: "yesterday"}}}
	got := EndpointSliceFrom(in)
	if !got.TriggerTime.IsZero() {
		t.Errorf("trigger time %v, want zero", got.TriggerTime)
	}
	if got.ServiceKey() != "" {
		t.Errorf("a slice without the service-name label belongs to %q", got.ServiceKey())
	}
}
