package records

import "fmt"

// Problem describes a part of an object that yields no record.
type Problem struct {
	// Kind is "Service" or "EndpointSlice".
	Kind string
	// Object is the object's "namespace/name".
	Object string
	// Field is the offending field, e.g. "spec.ports[1].name".
	Field string
	// Value is the offending value.
	Value string
	// Reason says what is wrong with it.
	Reason string
}

func (p Problem) Error() string {
	return fmt.Sprintf("%s %s: %s %q: %s", p.Kind, p.Object, p.Field, p.Value, p.Reason)
}
