package contract

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Record is one SkyDNS record: the JSON value stored at a key.
//
// Host is an IP address (an A or AAAA record) or a domain name (a CNAME, or
// the target of SRV, MX and PTR answers). Text alone makes a TXT record.
type Record struct {
	Host        string `json:"host,omitempty"`
	Port        int    `json:"port,omitempty"`
	Priority    int    `json:"priority,omitempty"`
	Weight      int    `json:"weight,omitempty"`
	Text        string `json:"text,omitempty"`
	Mail        bool   `json:"mail,omitempty"`
	TTL         uint32 `json:"ttl,omitempty"`
	TargetStrip int    `json:"targetstrip,omitempty"`
	Group       string `json:"group,omitempty"`
	// Owner names the writer that owns this key. kube2sky sets it and only
	// ever changes or deletes keys whose owner is its own; records written by
	// hand have none. Readers ignore it.
	Owner string `json:"owner,omitempty"`
}

// ErrNoData is wrapped by Decode when a value has neither a host nor a text,
// so it could not produce any answer.
var ErrNoData = errors.New("record has neither host nor text")

// Encode returns the record's JSON. The encoding is byte-stable: the same
// record always encodes to the same bytes, so unchanged records compare equal.
func (r Record) Encode() []byte {
	b, err := json.Marshal(r)
	if err != nil { // a struct of strings, ints and bools always marshals
		panic(fmt.Sprintf("etcdstore: encoding record: %v", err))
	}
	return b
}

// Decode parses the value stored at key. A value that is not a JSON object,
// has out-of-range numbers, or carries neither host nor text is an error that
// names the key; Decode never returns a silently zero record.
func Decode(key string, value []byte) (Record, error) {
	var r Record
	if err := json.Unmarshal(value, &r); err != nil {
		return Record{}, fmt.Errorf("key %q: invalid record JSON: %w", key, err)
	}
	if err := r.validate(); err != nil {
		return Record{}, fmt.Errorf("key %q: %w", key, err)
	}
	return r, nil
}

func (r Record) validate() error {
	if r.Host == "" && r.Text == "" {
		return ErrNoData
	}
	if err := checkUint16("port", r.Port); err != nil {
		return err
	}
	if err := checkUint16("priority", r.Priority); err != nil {
		return err
	}
	if err := checkUint16("weight", r.Weight); err != nil {
		return err
	}
	if r.TargetStrip < 0 || r.TargetStrip > 127 {
		return fmt.Errorf("targetstrip %d out of range 0..127", r.TargetStrip)
	}
	return nil
}

func checkUint16(field string, v int) error {
	if v < 0 || v > 65535 {
		return fmt.Errorf("%s %d out of range 0..65535", field, v)
	}
	return nil
}
