package explain

import (
	"fmt"
	"io"
	"strings"
)

// Write prints the report for a person: the question, etcd's keys, the
// objects and their drift, then each replica's answer and revision.
func (r Report) Write(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n\n", r.Query.Name, r.Query.TypeName())
	r.writeKeys(&b)
	r.writeObjects(&b)
	r.writeReplicas(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

func (r Report) writeKeys(b *strings.Builder) {
	where := "at and below " + r.Query.Key
	if r.Query.Reverse {
		where = "at " + r.Query.Key
	}
	if len(r.Keys.KVs) == 0 {
		fmt.Fprintf(b, "etcd (revision %d): no key %s, so the name does not exist\n", r.Keys.Revision, where)
		return
	}
	fmt.Fprintf(b, "etcd (revision %d): %s %s\n", r.Keys.Revision, plural(len(r.Keys.KVs), "key"), where)
	for _, kv := range r.Keys.KVs {
		fmt.Fprintf(b, "  %s\n      %s\n      created %d, modified %d, %s\n",
			kv.Key, kv.Value, kv.CreateRevision, kv.ModRevision, r.ownership(kv.Owner))
	}
	if r.Keys.More {
		b.WriteString("  ... more keys below the name, not shown (--max-keys)\n")
	}
}

// ownership says who owns a key.
func (r Report) ownership(owner string) string {
	switch owner {
	case "":
		return "no owner: added by hand, kube2sky leaves it alone"
	case r.Owner:
		return "owner " + owner
	}
	return "owner " + owner + " (not this kube2sky's " + r.Owner + ": not checked)"
}

func (r Report) writeObjects(b *strings.Builder) {
	if len(r.Objects) == 0 && r.Unchecked == 0 {
		return
	}
	b.WriteString("\nobjects\n")
	for _, o := range r.Objects {
		writeObject(b, o)
	}
	if r.Unchecked > 0 {
		fmt.Fprintf(b, "  %s of kube2sky's stand for no Service (pod addresses, hosts): not checked\n", plural(r.Unchecked, "key"))
	}
}

func writeObject(b *strings.Builder, o ObjectCheck) {
	switch {
	case o.Err != nil:
		fmt.Fprintf(b, "  %s: not checked: %v\n", o.Ref, o.Err)
		return
	case !o.Checked:
		fmt.Fprintf(b, "  %s: not fetched (no --kubeconfig), %s\n", o.Ref, plural(len(o.Keys), "key"))
		return
	case !o.Found && len(o.Keys) == 0:
		fmt.Fprintf(b, "  %s: not in the API, and kube2sky owns no key for it\n", o.Ref)
		return
	case !o.Found:
		fmt.Fprintf(b, "  %s: not in the API; stale keys: %d\n", o.Ref, len(o.Keys))
	case o.Ref.Kind == KindZone:
		fmt.Fprintf(b, "  %s\n", o.Ref)
	default:
		fmt.Fprintf(b, "  %s, resourceVersion %s, EndpointSlices %s\n", o.Ref, o.ResourceVersion, listOrNone(o.Slices))
	}
	writeDrift(b, o.Drift)
}

func writeDrift(b *strings.Builder, d Drift) {
	if d.None() {
		fmt.Fprintf(b, "      in sync: etcd holds the %s the builder gives\n", plural(d.Same, "record"))
		return
	}
	fmt.Fprintf(b, "      DRIFT: %d same, %d missing, %d extra, %d changed\n", d.Same, len(d.Missing), len(d.Extra), len(d.Changed))
	for _, e := range d.Missing {
		fmt.Fprintf(b, "      missing %s %s\n", e.Key, e.Record.Encode())
	}
	for _, kv := range d.Extra {
		fmt.Fprintf(b, "      extra   %s %s\n", kv.Key, kv.Value)
	}
	for _, c := range d.Changed {
		fmt.Fprintf(b, "      changed %s\n        etcd  %s\n        built %s\n", c.Key, c.Have, c.Want)
	}
}

func (r Report) writeReplicas(b *strings.Builder) {
	if len(r.Replicas) == 0 {
		b.WriteString("\nreplicas: none given (--dns, or --kubeconfig to find the DNS Service's)\n")
		return
	}
	if len(r.Keys.KVs) == 0 {
		fmt.Fprintf(b, "\nreplicas (etcd at revision %d)\n", r.Keys.Revision)
	} else {
		fmt.Fprintf(b, "\nreplicas (etcd at revision %d; the keys above last changed at %d)\n", r.Keys.Revision, r.Keys.MaxMod())
	}
	for _, s := range r.Replicas {
		fmt.Fprintf(b, "  %s  %s; %s\n", s.DNS, answerLine(s), r.revisionLine(s))
		for _, rr := range s.Answer {
			fmt.Fprintf(b, "      %s\n", rr)
		}
	}
}

func answerLine(s ReplicaState) string {
	if s.AskErr != nil {
		return "no answer: " + s.AskErr.Error()
	}
	return fmt.Sprintf("%s, %s", s.Rcode, plural(len(s.Answer), "record"))
}

// revisionLine compares a replica's applied revision with etcd's.
func (r Report) revisionLine(s ReplicaState) string {
	if s.RevErr != nil {
		return "applied revision unknown: " + s.RevErr.Error()
	}
	line := fmt.Sprintf("applied revision %d", s.Applied)
	switch behind := r.Keys.Revision - s.Applied; {
	case behind <= 0:
		return line + " (current)"
	case s.Applied >= r.Keys.MaxMod():
		return fmt.Sprintf("%s (%d behind etcd, but has every key above)", line, behind)
	default:
		return fmt.Sprintf("%s (%d behind etcd, OLDER than the keys above)", line, behind)
	}
}

// plural is "1 key", "2 keys".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func listOrNone(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(items, ", ")
}
