package plan

import (
	"bytes"
	"encoding/json"
)

// KV is one key as read from etcd.
type KV struct {
	Value  []byte
	ModRev int64
	Owner  string // the value's "owner", "" when none or not a record
	Host   string // the value's "host"
}

// Current maps keys to what etcd holds for them.
type Current map[string]KV

// Change is a put (Value set) or a delete (Value nil) of one key, made only
// if the key's mod revision is still ModRev (0: the key is absent).
type Change struct {
	Key    string
	Value  []byte
	ModRev int64
}

// Decode parses the owner and host of a value; anything that is not a
// JSON object has neither.
func Decode(value []byte, modRev int64) KV {
	out := KV{Value: value, ModRev: modRev}
	if !bytes.Contains(value, []byte(`"owner"`)) {
		return out
	}
	var fields struct {
		Owner string `json:"owner"`
		Host  string `json:"host"`
	}
	if json.Unmarshal(value, &fields) == nil {
		out.Owner, out.Host = fields.Owner, fields.Host
	}
	return out
}
