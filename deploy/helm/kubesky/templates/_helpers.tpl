{{/* Labels of every object: kubesky's name and Helm's own. */}}
{{- define "kubesky.labels" -}}
app.kubernetes.io/name: kubesky
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{/* The image of component (etcd, kube2sky, skydns); call with (list $ "name"). */}}
{{- define "kubesky.image" -}}
{{- $ := index . 0 -}}
image: {{ printf "%s/%s:%s" $.Values.image.repository (index . 1) $.Values.image.tag }}
{{- with $.Values.image.pullPolicy }}
imagePullPolicy: {{ . }}
{{- end }}
{{- end }}

{{/* The shared topology's etcd endpoints, comma-separated. */}}
{{- define "kubesky.etcdEndpoints" -}}
{{- $eps := .Values.etcd.endpoints -}}
{{- if not $eps -}}
{{- range .Values.etcd.clusterIPs }}{{ $eps = append $eps (printf "https://%s:2379" .) }}{{ end -}}
{{- end -}}
{{ join "," $eps }}
{{- end }}

{{/* Scheduling shared by every pod. */}}
{{- define "kubesky.scheduling" -}}
dnsPolicy: Default
nodeSelector:
  kubernetes.io/os: linux
tolerations:
  - key: CriticalAddonsOnly
    operator: Exists
  - key: node-role.kubernetes.io/control-plane
    effect: NoSchedule
{{- end }}

{{/* The DNS pods' priority, affinity and spread; call with (list $ selectorLabels). */}}
{{- define "kubesky.dnsPlacement" -}}
{{- $ := index . 0 -}}
{{- with $.Values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- include "kubesky.scheduling" $ | nindent 0 }}
{{- with $.Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- if kindIs "invalid" $.Values.topologySpreadConstraints }}
{{- include "kubesky.spread" (list (index . 1) true) | nindent 0 }}
{{- else if $.Values.topologySpreadConstraints }}
topologySpreadConstraints:
  {{- tpl (toYaml $.Values.topologySpreadConstraints) $ | nindent 2 }}
{{- end }}
{{- end }}

{{/* The built-in spread over nodes, then zones; call with (list selectorLabels byRevision), or (list selectorLabels byRevision keys) to spread over keys alone. */}}
{{- define "kubesky.spread" -}}
{{- $sel := index . 0 -}}
{{- $byRevision := index . 1 -}}
{{- $keys := list "kubernetes.io/hostname" "topology.kubernetes.io/zone" -}}
{{- if gt (len .) 2 }}{{ $keys = index . 2 }}{{ end -}}
topologySpreadConstraints:
{{- range $i, $key := $keys }}
  - maxSkew: 1
    topologyKey: {{ $key }}
    {{- if eq $i 0 }}
    whenUnsatisfiable: DoNotSchedule
    nodeTaintsPolicy: Honor
    {{- else }}
    whenUnsatisfiable: ScheduleAnyway
    {{- end }}
    {{- if $byRevision }}
    matchLabelKeys: [pod-template-hash]
    {{- end }}
    labelSelector:
      matchLabels:
        {{- toYaml $sel | nindent 8 }}
{{- end }}
{{- end }}

{{/* The pod security context of every pod; call with (list $ lowPorts). */}}
{{- define "kubesky.podSecurity" -}}
securityContext:
  runAsNonRoot: true
  runAsUser: 65532
  runAsGroup: 65532
  fsGroup: 65532
  seccompProfile:
    type: RuntimeDefault
  {{- if index . 1 }}
  sysctls:
    - name: net.ipv4.ip_unprivileged_port_start
      value: "0"
  {{- end }}
{{- end }}

{{/* A container's security context; call with (list) or the capabilities to add, "root" among them to run as root (an added capability takes effect only for root). */}}
{{- define "kubesky.containerSecurity" -}}
securityContext:
  {{- if has "root" . }}
  runAsUser: 0
  {{- end }}
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities:
    drop: ["ALL"]
    {{- with without . "root" }}
    add: {{ toJson . }}
    {{- end }}
{{- end }}

{{/* The mounts of extraSecrets. */}}
{{- define "kubesky.extraSecretMounts" -}}
{{- range .Values.extraSecrets }}
- name: {{ .name }}
  mountPath: {{ .mountPath }}
  readOnly: true
{{- end }}
{{- end }}

{{/* The volumes of extraSecrets. */}}
{{- define "kubesky.extraSecretVolumes" -}}
{{- range .Values.extraSecrets }}
- name: {{ .name }}
  secret:
    secretName: {{ .name }}
    defaultMode: {{ .defaultMode | default 288 }}
{{- end }}
{{- end }}

{{/* A volume of one identity's etcd Secret, kubesky-etcd-<identity>; call with (list volumeName identity). */}}
{{- define "kubesky.etcdTLSVolume" -}}
- name: {{ index . 0 }}
  secret:
    secretName: kubesky-etcd-{{ index . 1 }}
    defaultMode: 0440
{{- end }}

{{/* The name of the DNS pods' Deployment: kubesky, or kubesky-skydns with the shared etcd. */}}
{{- define "kubesky.dnsDeployment" -}}
{{ ternary "kubesky-skydns" "kubesky" (include "kubesky.sharedEtcd" . | eq "true") }}
{{- end }}

{{/* The etcd client volume of kube2sky, skydns or node-local skydns in the shared topologies; call with the identity. */}}
{{- define "kubesky.etcdClientTLS" -}}
{{- include "kubesky.etcdTLSVolume" (list "etcd-tls" .) }}
{{- end }}

{{/* The relays' endpoint, where every skydns of the shared topologies reads etcd. */}}
{{- define "kubesky.relayEndpoint" -}}
https://{{ .Values.etcd.relay.clusterIP }}:2379
{{- end }}

{{/* "true" when the topology runs deploy/shared-etcd's etcd cluster (shared, node-local), else "". */}}
{{- define "kubesky.sharedEtcd" -}}
{{- if has .Values.topology (list "shared" "node-local") }}true{{ end }}
{{- end }}

{{/* The kube2sky container; call with (list $ shared). */}}
{{- define "kubesky.kube2sky" -}}
{{- $ := index . 0 -}}
- name: kube2sky
  {{- include "kubesky.image" (list $ "kube2sky") | nindent 2 }}
  args:
    {{- include "kubesky.etcdArgs" . | nindent 4 }}
    {{- with include "kubesky.prefixArgs" (list $ "") }}{{ nindent 4 . }}{{ end }}
    - --zone={{ $.Values.zone }}
    - --http-addr=0.0.0.0:8082
    - --leader-elect
    - --kube-dns-configmap={{ $.Release.Namespace }}/kube-dns
    {{- with $.Values.coreDNS.configMap }}
    - --corefile=/etc/coredns/Corefile
    - --hosts-configmap={{ $.Release.Namespace }}/{{ . }}
    {{- with $.Values.coreDNS.hostsDomain }}
    - --hosts-domain={{ . }}
    {{- end }}
    {{- end }}
    {{- include "kubesky.clustersetArgs" $ | nindent 4 }}
  ports:
    - name: k2s-metrics
      containerPort: 8082
      protocol: TCP
  {{- with include "kubesky.mounts" (list $ (index . 1) "writer") | trim }}{{ nindent 2 . }}{{ end }}
  livenessProbe:
    httpGet:
      path: /healthz
      port: 8082
    periodSeconds: 10
    failureThreshold: 6
  readinessProbe:
    httpGet:
      path: /readyz
      port: 8082
    periodSeconds: 5
  resources:
    {{- toYaml $.Values.resources.kube2sky | nindent 4 }}
  {{- include "kubesky.containerSecurity" (list) | nindent 2 }}
{{- end }}

{{/* The skydns container; call with (list $ shared). */}}
{{- define "kubesky.skydns" -}}
{{- $ := index . 0 -}}
- name: skydns
  {{- include "kubesky.image" (list $ "skydns") | nindent 2 }}
  args:
    - --dns-addr=0.0.0.0:53
    - --http-addr=0.0.0.0:8081
    {{- if index . 1 }}
    {{- include "kubesky.etcdClientArgs" (include "kubesky.relayEndpoint" $) | nindent 4 }}
    {{- else }}
    {{- include "kubesky.etcdArgs" . | nindent 4 }}
    {{- end }}
    {{- with include "kubesky.prefixArgs" (list $ "") }}{{ nindent 4 . }}{{ end }}
    {{- if $.Values.coreDNS.configMap }}
    - --corefile=/etc/coredns/Corefile
    {{- else }}
    - --zone={{ $.Values.zone }}
    - --lameduck=5s
    {{- end }}
    - --ns-addrs={{ $.Values.service.clusterIP }}
    {{- include "kubesky.clustersetArgs" $ | nindent 4 }}
  ports:
    - name: dns
      containerPort: 53
      protocol: UDP
    - name: dns-tcp
      containerPort: 53
      protocol: TCP
    - name: metrics
      containerPort: 8081
      protocol: TCP
  {{- with include "kubesky.mounts" (list $ (index . 1) "reader") | trim }}{{ nindent 2 . }}{{ end }}
  livenessProbe:
    httpGet:
      path: /healthz
      port: 8081
    periodSeconds: 10
    failureThreshold: 5
  readinessProbe:
    httpGet:
      path: /readyz
      port: 8081
    periodSeconds: 2
  resources:
    {{- toYaml $.Values.resources.skydns | nindent 4 }}
  {{- include "kubesky.containerSecurity" (list "NET_BIND_SERVICE") | nindent 2 }}
{{- end }}

{{/* The volume mounts of kube2sky and skydns: the etcd client's (when shared), extraSecrets, the broker's Secret of role ("writer" for kube2sky, "reader" for skydns) and CoreDNS's ConfigMap when coreDNS.configMap names it; call with (list $ shared role). */}}
{{- define "kubesky.mounts" -}}
{{- $ := index . 0 -}}
{{- $broker := include "kubesky.clustersetMount" (list $ (index . 2)) | trim -}}
{{- if or (index . 1) $.Values.extraSecrets $.Values.coreDNS.configMap $broker }}
volumeMounts:
  {{- if index . 1 }}
  {{- include "kubesky.etcdClientMount" $ | nindent 2 }}
  {{- end }}
  {{- with include "kubesky.extraSecretMounts" $ | trim }}{{ nindent 2 . }}{{ end }}
  {{- with $broker }}{{ nindent 2 . }}{{ end }}
  {{- if $.Values.coreDNS.configMap }}
  - name: corefile
    mountPath: /etc/coredns
    readOnly: true
  {{- end }}
{{- end }}
{{- end }}

{{/* The volume of CoreDNS's ConfigMap, if coreDNS.configMap names it: skydns and kube2sky read its Corefile, and the hosts files it names under /etc/coredns, from every key. */}}
{{- define "kubesky.corefileVolume" -}}
{{- with .Values.coreDNS.configMap }}
- name: corefile
  configMap:
    name: {{ . }}
{{- end }}
{{- end }}

{{/* The etcd client flags of kube2sky and skydns, a YAML list: the pod's own etcd, or the shared one with TLS; call with (list $ shared). */}}
{{- define "kubesky.etcdArgs" -}}
{{- if not (index . 1) -}}
- --etcd-endpoints=http://127.0.0.1:2379
{{- else -}}
{{ include "kubesky.etcdClientArgs" (include "kubesky.etcdEndpoints" (index . 0)) }}
{{- end }}
{{- end }}

{{/* The TLS etcd client flags of kube2sky and skydns, a YAML list; call with the endpoints. */}}
{{- define "kubesky.etcdClientArgs" -}}
- --etcd-endpoints={{ . }}
- --etcd-cafile=/etc/kubesky/etcd-tls/ca.crt
- --etcd-certfile=/etc/kubesky/etcd-tls/client.crt
- --etcd-keyfile=/etc/kubesky/etcd-tls/client.key
{{- end }}

{{/* The Multi-Cluster Services flags of kube2sky and skydns when clusterset.enabled, a YAML list (empty otherwise): with a broker, how to reach it with the Secret mounted by kubesky.clustersetMount. */}}
{{- define "kubesky.clustersetArgs" -}}
{{- with .Values.clusterset }}{{ if .enabled -}}
{{- include "kubesky.checkClusterset" $ -}}
- --clusterset-prefix={{ .prefix }}
- --cluster-id={{ .clusterID }}
{{- with .broker.endpoints }}
- --clusterset-etcd-endpoints={{ join "," . }}
{{- range $flag, $file := dict "cafile" "ca.crt" "certfile" "tls.crt" "keyfile" "tls.key" }}
- --clusterset-etcd-{{ $flag }}=/etc/kubesky/clusterset-tls/{{ $file }}
{{- end }}
{{- end }}
{{- end }}{{ end }}
{{- end }}

{{/* Fails on clusterset values that cannot work together. */}}
{{- define "kubesky.checkClusterset" -}}
{{- with .Values.clusterset -}}
{{- if not .clusterID }}{{ fail "clusterset.clusterID: this cluster's ID (a DNS label), given to kube2sky and skydns" }}{{ end -}}
{{- if and (not .broker.endpoints) (not (include "kubesky.sharedEtcd" $)) -}}
{{- fail (printf "clusterset.broker.endpoints: topology %s needs a broker etcd for clusterset.enabled (each DNS pod's etcd is its own; without a broker the clusters share the records' etcd, topology shared or node-local)" $.Values.topology) -}}
{{- end -}}
{{- $a := printf "%s/" (trimSuffix "/" .prefix) -}}
{{- $b := printf "%s/" (trimSuffix "/" $.Values.etcd.prefix) -}}
{{- if or (hasPrefix $a $b) (hasPrefix $b $a) }}{{ fail (printf "clusterset.prefix: %s overlaps etcd.prefix %s" .prefix $.Values.etcd.prefix) }}{{ end -}}
{{- end -}}
{{- end }}

{{/* "true" when kube2sky and skydns reach the clusterset records in a broker etcd (clusterset.broker.endpoints), else "". */}}
{{- define "kubesky.clustersetBroker" -}}
{{- if and .Values.clusterset.enabled .Values.clusterset.broker.endpoints }}true{{ end }}
{{- end }}

{{/* The volume of the broker Secret of role "writer" (kube2sky) or "reader" (skydns), when there is a broker; call with (list $ role). */}}
{{- define "kubesky.clustersetVolume" -}}
{{- $ := index . 0 -}}
{{- if include "kubesky.clustersetBroker" $ }}
- name: clusterset-{{ index . 1 }}
  secret:
    secretName: {{ get $.Values.clusterset.broker (printf "%sSecret" (index . 1)) }}
    defaultMode: 0440
{{- end }}
{{- end }}

{{/* The mount of kubesky.clustersetVolume for role, where kubesky.clustersetArgs points; call with (list $ role). */}}
{{- define "kubesky.clustersetMount" -}}
{{- if include "kubesky.clustersetBroker" (index . 0) }}
- name: clusterset-{{ index . 1 }}
  mountPath: /etc/kubesky/clusterset-tls
  readOnly: true
{{- end }}
{{- end }}

{{/* The records' --prefix, a YAML list: empty for the daemons' default /skydns; call with the suffix to add ("" or "/"). */}}
{{- define "kubesky.prefixArgs" -}}
{{- $ := index . 0 -}}
{{- if ne $.Values.etcd.prefix "/skydns" -}}
- --prefix={{ $.Values.etcd.prefix }}{{ index . 1 }}
{{- end }}
{{- end }}

{{/* The mount of kubesky.etcdClientTLS. */}}
{{- define "kubesky.etcdClientMount" -}}
- name: etcd-tls
  mountPath: /etc/kubesky/etcd-tls
  readOnly: true
{{- end }}

{{/* One skydns of a node-local pod; call with (list $ id metricsPort). */}}
{{- define "kubesky.nodeLocalSkydns" -}}
{{- $ := . -}}
{{- $addr := $.Values.nodeLocal.address -}}
- name: skydns
  {{- include "kubesky.image" (list $ "skydns") | nindent 2 }}
  command: ["/skydns-node"]
  args:
    - --dns-addr={{ ternary (printf "[%s]" $addr) $addr (contains ":" $addr) }}:53
    - --node-local-interface=kubesky0
    - --http-addr=0.0.0.0:9253
    - --health-socket=/run/skydns/health.sock
    {{- include "kubesky.etcdClientArgs" (include "kubesky.relayEndpoint" $) | nindent 4 }}
    {{- with include "kubesky.prefixArgs" (list $ "") }}{{ nindent 4 . }}{{ end }}
    - --zone={{ $.Values.zone }}
    - --lameduck=2s
    - --ns-addrs={{ $.Values.service.clusterIP }}
    - --node-local-peers=/run/skydns-peers
    - --fast-path-answers=4096
    - --memory-limit-factor=1.25
    {{- include "kubesky.clustersetArgs" $ | nindent 4 }}
  volumeMounts:
    {{- include "kubesky.etcdClientMount" $ | nindent 4 }}
    - name: run
      mountPath: /run/skydns
    - name: peers
      mountPath: /run/skydns-peers
    {{- with include "kubesky.extraSecretMounts" $ | trim }}{{ nindent 4 . }}{{ end }}
    {{- with include "kubesky.clustersetMount" (list $ "reader") | trim }}{{ nindent 4 . }}{{ end }}
  {{- range $probe, $timing := dict "readinessProbe" (dict "path" "/readyz" "periodSeconds" 2 "timeoutSeconds" 2) "livenessProbe" (dict "path" "/healthz" "periodSeconds" 10 "timeoutSeconds" 5 "failureThreshold" 5) }}
  {{ $probe }}:
    exec:
      command: ["/skydns-node", "probe", "--socket=/run/skydns/health.sock", "--path={{ $timing.path }}"]
    {{- toYaml (omit $timing "path") | nindent 4 }}
  {{- end }}
  resources:
    {{- toYaml $.Values.nodeLocal.resources | nindent 4 }}
  {{- include "kubesky.containerSecurity" (list "root" "NET_ADMIN" "NET_BIND_SERVICE") | nindent 2 }}
{{- end }}
