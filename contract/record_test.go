package contract

import (
	"errors"
	"strings"
	"testing"
)

func TestRecordEncodingOmitsZeroFieldsAndIsStable(t *testing.T) {
	r := Record{Host: "10.96.0.10", Port: 80, TTL: 30, Owner: "kube2sky"}
	want := `{"host":"10.96.0.10","port":80,"ttl":30,"owner":"kube2sky"}`
	for i := 0; i < 3; i++ {
		if got := string(r.Encode()); got != want {
			t.Fatalf("Encode() = %s, want %s", got, want)
		}
	}
}

func TestDecodeRoundTripsEveryField(t *testing.T) {
	in := Record{Host: "web.example.", Port: 443, Priority: 10, Weight: 5, Text: "hi", Mail: true, TTL: 60, TargetStrip: 1, Group: "g", Owner: "o"}
	out, err := Decode("/skydns/x", in.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if out != in {
		t.Fatalf("round trip: got %+v, want %+v", out, in)
	}
}

func TestDecodeRejectsBadValuesNamingTheKey(t *testing.T) {
	cases := map[string]string{
		"not JSON":              `{"host":`,
		"a JSON string":         `"10.0.0.1"`,
		"neither host nor text": `{"port":80}`,
		"an empty object":       `{}`,
		"a port out of range":   `{"host":"10.0.0.1","port":70000}`,
		"a negative weight":     `{"host":"10.0.0.1","weight":-1}`,
		"a huge targetstrip":    `{"host":"10.0.0.1","targetstrip":500}`,
		"a wrong field type":    `{"host":10}`,
	}
	for name, value := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Decode("/skydns/local/cluster/bad", []byte(value))
			if err == nil || !strings.Contains(err.Error(), `"/skydns/local/cluster/bad"`) {
				t.Fatalf("Decode(%s) error = %v, want one naming the key", value, err)
			}
		})
	}
}

func TestDecodeAcceptsTextOnlyAndIgnoresUnknownFields(t *testing.T) {
	r, err := Decode("k", []byte(`{"text":"1.1.0","future":true}`))
	if err != nil || r.Text != "1.1.0" {
		t.Fatalf("got %+v, %v", r, err)
	}
	if _, err := Decode("k", []byte(`{"port":1}`)); !errors.Is(err, ErrNoData) {
		t.Fatalf("want ErrNoData, got %v", err)
	}
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add([]byte(`{"host":"10.0.0.1","port":80}`))
	f.Add([]byte(`{"text":"x","ttl":5}`))
	f.Add([]byte(`{"host":"a.b.","priority":1,"weight":2,"targetstrip":1,"group":"g","mail":true}`))
	f.Fuzz(func(t *testing.T, value []byte) {
		r, err := Decode("/skydns/k", value)
		if err != nil {
			return
		}
		again, err := Decode("/skydns/k", r.Encode())
		if err != nil || again != r {
			t.Fatalf("decoded %+v does not round-trip: %+v, %v", r, again, err)
		}
	})
}
