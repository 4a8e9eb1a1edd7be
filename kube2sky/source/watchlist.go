package source

import (
	"os"

	clientfeatures "k8s.io/client-go/features"
)

// watchListEnv is the environment variable of client-go's WatchListClient
// feature; when it is set, its value decides and kube2sky leaves it alone.
const watchListEnv = "KUBE_FEATURE_" + string(clientfeatures.WatchListClient)

// UseWatchList makes every informer of the process get its initial state as
// a stream of watch events from the API server's watch cache (a watch with
// sendInitialEvents) instead of a list. Each Pod is decoded and reduced to a
// podObject on its own, and the API server reads nothing from etcd for it:
// a paged list of 150,000 Pods is 300 consistent reads of 500 Pods, one
// after the other. An API server that does not serve it makes client-go
// fall back to the list. It must run before the informers do.
func UseWatchList() {
	if _, set := os.LookupEnv(watchListEnv); set {
		return
	}
	clientfeatures.ReplaceFeatureGates(watchListGates{clientfeatures.FeatureGates()})
}

// watchListGates is client-go's feature gates with WatchListClient on.
type watchListGates struct{ clientfeatures.Gates }

func (g watchListGates) Enabled(key clientfeatures.Feature) bool {
	return key == clientfeatures.WatchListClient || g.Gates.Enabled(key)
}
