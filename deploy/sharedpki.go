package deploy

// SharedEtcdPKIFlags are the flags of `kubesky-demo pki`, besides --dir,
// that write the files of shared-etcd's Secret kubesky-etcd-tls into
// <dir>/etcd, as README.md shows: one certificate every member serves and
// dials its peers with (under the common name the members accept from a
// peer, and the addresses of etcd.yaml's Services and hostAliases), and the
// client certificate of kube2sky and skydns.
var SharedEtcdPKIFlags = []string{
	"--etcd-only",
	"--etcd-member=kubesky-etcd-member",
	"--etcd-user=kubesky",
	"--etcd-proxy",
	"--etcd-name=10.96.0.11,10.96.0.12,10.96.0.13,10.96.0.14,kubesky-etcd-0.peer,kubesky-etcd-1.peer,kubesky-etcd-2.peer",
}
