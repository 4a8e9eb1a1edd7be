package integration

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/miekg/dns"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// scenarioFile is testdata/scenarios.yaml; its schema is documented at the
// top of that file.
type scenarioFile struct {
	Scenarios []scenario `json:"scenarios"`
}

type scenario struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Steps     []step `json:"steps"`
}

// step is one action of a scenario; exactly one field is set.
type step struct {
	Apply     string        `json:"apply,omitempty"`
	Delete    *objectRef    `json:"delete,omitempty"`
	PodStatus *podStatus    `json:"podStatus,omitempty"`
	Expect    []expectation `json:"expect,omitempty"`
}

type objectRef struct {
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

type podStatus struct {
	Name  string   `json:"name"`
	Ready bool     `json:"ready"`
	IPs   []string `json:"ips"`
}

// expectation is one query and what its reply must be.
type expectation struct {
	Qname     string    `json:"qname"`
	Qtype     string    `json:"qtype"`
	Transport []string  `json:"transport,omitempty"`
	Client    string    `json:"client,omitempty"`
	Rcode     string    `json:"rcode,omitempty"`
	Answer    *[]string `json:"answer,omitempty"`
	Rdata     *[]string `json:"rdata,omitempty"`
	Authority []string  `json:"authority,omitempty"`
	Truncated *bool     `json:"truncated,omitempty"`
}

// Clients an expectation can be checked with.
const (
	clientMiekg = "miekg"
	clientDig   = "dig"
)

// deletableKinds are the kinds a delete step may name.
var deletableKinds = []string{"Service", "EndpointSlice", "Pod", "Namespace"}

// loadScenarios reads and validates a scenario file.
func loadScenarios(path string) ([]scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	scenarios, err := parseScenarios(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return scenarios, nil
}

// parseScenarios decodes YAML strictly (an unknown field is an error) and
// validates every scenario.
func parseScenarios(data []byte) ([]scenario, error) {
	js, err := utilyaml.ToJSON(data)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	var f scenarioFile
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	if len(f.Scenarios) == 0 {
		return nil, errors.New("no scenarios")
	}
	var errs []error
	names := map[string]bool{}
	for i := range f.Scenarios {
		sc := f.Scenarios[i]
		if names[sc.Name] {
			errs = append(errs, fmt.Errorf("scenario %q: name used twice", sc.Name))
		}
		names[sc.Name] = true
		errs = append(errs, sc.validate())
	}
	return f.Scenarios, errors.Join(errs...)
}

func (sc scenario) validate() error {
	if sc.Name == "" {
		return errors.New("a scenario has no name")
	}
	if len(sc.Steps) == 0 {
		return fmt.Errorf("scenario %q: no steps", sc.Name)
	}
	var errs []error
	for i, st := range sc.Steps {
		if err := st.validate(); err != nil {
			errs = append(errs, fmt.Errorf("scenario %q step %d: %w", sc.Name, i+1, err))
		}
	}
	return errors.Join(errs...)
}

func (st step) validate() error {
	set := 0
	for _, isSet := range []bool{st.Apply != "", st.Delete != nil, st.PodStatus != nil, len(st.Expect) > 0} {
		if isSet {
			set++
		}
	}
	if set != 1 {
		return fmt.Errorf("want exactly one of apply, delete, podStatus, expect; got %d", set)
	}
	switch {
	case st.Delete != nil:
		return st.Delete.validate()
	case st.PodStatus != nil && st.PodStatus.Name == "":
		return errors.New("podStatus: no name")
	}
	var errs []error
	for _, e := range st.Expect {
		errs = append(errs, e.validate())
	}
	return errors.Join(errs...)
}

func (r objectRef) validate() error {
	if !slices.Contains(deletableKinds, r.Kind) || r.Name == "" {
		return fmt.Errorf("delete: want a kind of %v and a name, got %q %q", deletableKinds, r.Kind, r.Name)
	}
	return nil
}

func (e expectation) validate() error {
	var errs []error
	if e.Qname == "" {
		errs = append(errs, errors.New("expect: no qname"))
	}
	if _, ok := dns.StringToType[e.Qtype]; !ok {
		errs = append(errs, fmt.Errorf("expect %s: qtype %q is not a DNS type", e.Qname, e.Qtype))
	}
	if _, ok := dns.StringToRcode[e.rcode()]; !ok {
		errs = append(errs, fmt.Errorf("expect %s: rcode %q is not an rcode", e.Qname, e.Rcode))
	}
	for _, tr := range e.Transport {
		if tr != "udp" && tr != "tcp" {
			errs = append(errs, fmt.Errorf("expect %s: transport %q: want udp or tcp", e.Qname, tr))
		}
	}
	errs = append(errs, e.validateClient(), e.validateAnswer())
	return errors.Join(errs...)
}

func (e expectation) validateClient() error {
	switch e.client() {
	case clientMiekg:
		return nil
	case clientDig:
		if len(e.Authority) > 0 || e.Truncated != nil {
			return fmt.Errorf("expect %s: authority and truncated are checked with the miekg client only", e.Qname)
		}
		return nil
	}
	return fmt.Errorf("expect %s: client %q: want %s or %s", e.Qname, e.Client, clientMiekg, clientDig)
}

func (e expectation) validateAnswer() error {
	if e.Answer != nil && e.Rdata != nil {
		return fmt.Errorf("expect %s: answer and rdata both given", e.Qname)
	}
	for _, typ := range e.Authority {
		if _, ok := dns.StringToType[typ]; !ok {
			return fmt.Errorf("expect %s: authority type %q is not a DNS type", e.Qname, typ)
		}
	}
	if e.Answer == nil {
		return nil
	}
	for _, line := range *e.Answer {
		if rr, err := dns.NewRR(line); err != nil || rr == nil {
			return fmt.Errorf("expect %s: answer %q is not a zone-file record: %v", e.Qname, line, err)
		}
	}
	return nil
}

func (e expectation) rcode() string {
	if e.Rcode == "" {
		return "NOERROR"
	}
	return strings.ToUpper(e.Rcode)
}

func (e expectation) client() string {
	if e.Client == "" {
		return clientMiekg
	}
	return e.Client
}

func (e expectation) transports() []string {
	if len(e.Transport) == 0 {
		return []string{"udp", "tcp"}
	}
	return e.Transport
}

// String names the query, for messages.
func (e expectation) String() string {
	return fmt.Sprintf("%s %s (%s)", e.Qname, e.Qtype, e.client())
}
