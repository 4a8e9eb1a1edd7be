package records

import (
	"fmt"
	"testing"
)

// benchServices returns n Services: four in five with a cluster IP and two
// named ports, every fifth headless with one slice of five ready endpoints.
func benchServices(n int) ([]Service, [][]EndpointSlice) {
	services := make([]Service, n)
	slicesOf := make([][]EndpointSlice, n)
	for i := range services {
		name := fmt.Sprintf("svc-%d", i)
		ports := []Port{{Name: "http", Protocol: "TCP", Port: 80}, {Name: "dns", Protocol: "UDP", Port: 53}}
		if i%5 != 4 {
			services[i] = clusterIPService(name, []string{fmt.Sprintf("10.96.%d.%d", i/256, i%256)}, ports...)
			continue
		}
		services[i] = headlessService(name, ports...)
		var endpoints []Endpoint
		for j := range 5 {
			endpoints = append(endpoints, Endpoint{Addresses: []string{fmt.Sprintf("10.%d.%d.%d", 100+j, i/256, i%256)}, Ready: true})
		}
		slicesOf[i] = []EndpointSlice{slice(name, name+"-x", "IPv4", ports, endpoints...)}
	}
	return services, slicesOf
}

func BenchmarkBuild10kServices(b *testing.B) {
	services, slicesOf := benchServices(10000)
	b.ReportAllocs()
	records := 0
	for b.Loop() {
		records = 0
		for i := range services {
			entries, _ := Build(testZone, services[i], slicesOf[i])
			records += len(entries)
		}
	}
	b.ReportMetric(float64(records), "records")
}
