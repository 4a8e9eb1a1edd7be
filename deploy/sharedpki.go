package deploy

import "path/filepath"

// SharedEtcdPKIFlags are the flags of `kubesky-demo pki`, besides --dir,
// that write the files of shared-etcd's Secrets into <dir>/etcd, as
// README.md shows: one certificate every member serves and dials its peers
// with (under the common name the members accept from a peer, and the
// addresses of etcd.yaml's Services and hostAliases); the client
// certificates of etcd's users root (the auth Job's), kube2sky and relay;
// the relay's serving certificate for its Service's address; and the
// readers' certificates, of a CA no member trusts.
var SharedEtcdPKIFlags = []string{
	"--etcd-only",
	"--etcd-member=kubesky-etcd-member",
	"--etcd-user=root,kube2sky,relay",
	"--etcd-reader=skydns,node-local",
	"--etcd-relay-name=10.96.0.14",
	"--etcd-name=10.96.0.11,10.96.0.12,10.96.0.13,kubesky-etcd-0.peer,kubesky-etcd-1.peer,kubesky-etcd-2.peer",
}

// EtcdSecrets are the shared etcd's Secrets, one per identity, each a map
// from the key the pods mount to the file of `pki` (under <dir>/etcd)
// it holds. No Secret holds two identities' keys.
var EtcdSecrets = map[string]map[string]string{
	"kubesky-etcd-member":   {"ca.crt": "ca.crt", "member.crt": "member-kubesky-etcd-member.crt", "member.key": "member-kubesky-etcd-member.key"},
	"kubesky-etcd-admin":    {"ca.crt": "ca.crt", "client.crt": "client-root.crt", "client.key": "client-root.key"},
	"kubesky-etcd-kube2sky": {"ca.crt": "ca.crt", "client.crt": "client-kube2sky.crt", "client.key": "client-kube2sky.key"},
	"kubesky-etcd-relay": {
		"ca.crt": "ca.crt", "client.crt": "client-relay.crt", "client.key": "client-relay.key",
		"relay.crt": "relay.crt", "relay.key": "relay.key", "readers-ca.crt": filepath.Join("readers", "ca.crt"),
	},
	"kubesky-etcd-skydns":     {"ca.crt": "ca.crt", "client.crt": filepath.Join("readers", "skydns.crt"), "client.key": filepath.Join("readers", "skydns.key")},
	"kubesky-etcd-node-local": {"ca.crt": "ca.crt", "client.crt": filepath.Join("readers", "node-local.crt"), "client.key": filepath.Join("readers", "node-local.key")},
}
