package clusterset

import (
	"fmt"
	"strings"

	"github.com/kubesky/kubesky/contract"
)

// DefaultPrefix is the etcd key prefix of the clusterset records.
const DefaultPrefix = "/clusterset"

// Zone is the clusterset zone the MCS DNS specification fixes.
const Zone = "clusterset.local."

// DNSVersion is the MCS DNS specification's schema version served at
// dns-version.clusterset.local.
const DNSVersion = "1.0.0"

// ServiceName is a namespaced Service name.
type ServiceName struct{ Namespace, Name string }

func (s ServiceName) String() string { return s.Namespace + "/" + s.Name }

// ExportID names one cluster's export of one Service, or (in an import
// key) one cluster's import of it.
type ExportID struct {
	Cluster string
	ServiceName
}

// ValidClusterID reports whether id can name a cluster: one lower-case DNS
// label.
func ValidClusterID(id string) bool { return contract.ValidLabel(id) }

// ClusterKey is the key a cluster holds on its lease while it publishes.
func ClusterKey(prefix, cluster string) string {
	return trim(prefix) + "/clusters/" + cluster
}

// ExportsPrefix is the key prefix of every cluster's exports.
func ExportsPrefix(prefix string) string { return trim(prefix) + "/exports/" }

// ClusterExportsPrefix is the key prefix of one cluster's exports.
func ClusterExportsPrefix(prefix, cluster string) string {
	return ExportsPrefix(prefix) + cluster + "/"
}

// ExportKey is the key of one export.
func ExportKey(prefix string, id ExportID) string {
	return ClusterExportsPrefix(prefix, id.Cluster) + id.Namespace + "/" + id.Name
}

// ImportsPrefix is the key prefix of every cluster's imports (clusterset
// IPs).
func ImportsPrefix(prefix string) string { return trim(prefix) + "/imports/" }

// ClusterImportsPrefix is the key prefix of one cluster's imports.
func ClusterImportsPrefix(prefix, cluster string) string {
	return ImportsPrefix(prefix) + cluster + "/"
}

// ImportKey is the key of one cluster's import of one Service (id names
// the importing cluster).
func ImportKey(prefix string, id ExportID) string {
	return ClusterImportsPrefix(prefix, id.Cluster) + id.Namespace + "/" + id.Name
}

// ParseExportKey returns the export a key names, or an error saying why the
// key is not an export key.
func ParseExportKey(prefix, key string) (ExportID, error) {
	return parseClusterKey(ExportsPrefix(prefix), key)
}

// ParseImportKey returns the importing cluster and the Service an import
// key names.
func ParseImportKey(prefix, key string) (ExportID, error) {
	return parseClusterKey(ImportsPrefix(prefix), key)
}

// parseClusterKey parses <under><cluster>/<namespace>/<service>.
func parseClusterKey(under, key string) (ExportID, error) {
	rest, ok := strings.CutPrefix(key, under)
	parts := strings.Split(rest, "/")
	if !ok || len(parts) != 3 {
		return ExportID{}, fmt.Errorf("key %q: want %s<cluster>/<namespace>/<service>", key, under)
	}
	id := ExportID{Cluster: parts[0], ServiceName: ServiceName{Namespace: parts[1], Name: parts[2]}}
	if !ValidClusterID(id.Cluster) || !contract.ValidLabel(id.Namespace) || !contract.ValidLabel(id.Name) {
		return ExportID{}, fmt.Errorf("key %q: cluster, namespace and service must be lower-case DNS labels", key)
	}
	return id, nil
}

// Overlaps reports whether one prefix lies within the other, so that a
// reader of one would take the other's values for its own.
func Overlaps(prefix, other string) bool {
	a, b := trim(prefix)+"/", trim(other)+"/"
	return strings.HasPrefix(a, b) || strings.HasPrefix(b, a)
}

func trim(prefix string) string { return strings.TrimSuffix(prefix, "/") }
