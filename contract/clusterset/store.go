package clusterset

import (
	"github.com/kubesky/kubesky/contract"
)

// Store holds the decoded exports of every cluster and the imports of one
// cluster under one prefix. It is not safe for concurrent use: one
// goroutine applies the updates and publishes the views it builds.
type Store struct {
	prefix string
	// cluster is the cluster whose imports (clusterset IPs) the views
	// carry; the other clusters' are skipped.
	cluster  string
	exports  map[ExportID]Export
	imports  map[ServiceName]Import
	revision int64
	// malformed is told about every value that is skipped, with the
	// error naming its key.
	malformed func(error)
}

// NewStore returns an empty store of the records under prefix, with the
// imports of cluster; malformed (may be nil) is called for each value
// skipped as malformed.
func NewStore(prefix, cluster string, malformed func(error)) *Store {
	if malformed == nil {
		malformed = func(error) {}
	}
	return &Store{prefix: prefix, cluster: cluster, exports: map[ExportID]Export{}, imports: map[ServiceName]Import{}, malformed: malformed}
}

// Apply takes one update of the prefix: a full list replaces everything.
func (s *Store) Apply(u contract.Update) {
	if u.Full {
		clear(s.exports)
		clear(s.imports)
	}
	for _, ev := range u.Events {
		s.apply(ev)
	}
	s.revision = u.Revision
}

func (s *Store) apply(ev contract.Event) {
	if id, err := ParseExportKey(s.prefix, ev.Key); err == nil {
		delete(s.exports, id)
		if ev.Type == contract.Put {
			s.putExport(id, ev)
		}
		return
	}
	if id, err := ParseImportKey(s.prefix, ev.Key); err == nil && id.Cluster == s.cluster {
		delete(s.imports, id.ServiceName)
		if ev.Type == contract.Put {
			s.putImport(id.ServiceName, ev)
		}
	}
	// other keys (clusters/, other clusters' imports) carry no answer
}

func (s *Store) putExport(id ExportID, ev contract.Event) {
	e, err := DecodeExport(ev.Key, ev.Value)
	if err != nil {
		s.malformed(err)
		return
	}
	s.exports[id] = e
}

func (s *Store) putImport(svc ServiceName, ev contract.Event) {
	i, err := DecodeImport(ev.Key, ev.Value)
	if err != nil {
		s.malformed(err)
		return
	}
	s.imports[svc] = i
}

// View merges what the store holds into a new immutable view.
func (s *Store) View() *View { return Merge(s.exports, s.imports, s.revision) }
