package contract

// EventType says whether an event stores or removes a key.
type EventType int

// The event types.
const (
	Put EventType = iota
	Delete
)

// Event is one change to one key.
type Event struct {
	Type  EventType
	Key   string
	Value []byte // nil for Delete
}

// Update is what a reader of the prefix receives (etcdstore's ListWatcher
// delivers them): either the complete content of the
// prefix at Revision (Full, every event a Put), or all the changes that
// etcd committed in the one revision Revision.
type Update struct {
	Revision int64
	Full     bool
	Events   []Event
}
