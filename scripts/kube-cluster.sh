#!/usr/bin/env bash
# Builds and starts a one- or two-node Kubernetes cluster on this machine
# for toll's Kubernetes runner and its tests (docs/distributed.md), as root:
#
#   scripts/kube-cluster.sh build          # Kubernetes v1.34.4 from the Go module proxy (cached)
#   scripts/kube-cluster.sh up [--nodes 2] # build, then etcd, containerd, control plane, node(s)
#   scripts/kube-cluster.sh env            # prints export TOLL_KUBECONFIG=... KUBECONFIG=...
#                                          # and toll's defaults for this cluster (TOLL_KUBE_*)
#   scripts/kube-cluster.sh images         # (re)imports toll's image, toll:dev, from this tree
#                                          # (and the JVM image below when its jars are there)
#   scripts/kube-cluster.sh java-image     # (re)imports toll-java:dev: this machine's JDK, the
#                                          # Java example and the OpenTelemetry Java agent
#   scripts/kube-cluster.sh down           # stops everything, leaves the machine as it was
#
# Everything (certificates, data, sockets, logs, the built binary, the
# kubeconfig) lives under one work folder, $TOLL_KUBE_DIR (default
# /var/tmp/toll-kube); down keeps only the built binary there (bin/), so the
# next up starts in seconds. All traffic stays on this machine: each node's
# address is on a bridge with no ports, each node's pods are on a local
# bridge of their own (the two pod ranges reach each other through this
# machine's own routes to the two bridges), nothing is masqueraded out, no
# image is pulled (imagePullPolicy Never, or a tag that is present).
#
# With --nodes 2 a second node runs beside the first on the same machine:
# its own containerd (root, state and socket under $W/node2), its own
# bridges and pod range, and a kubelet on its own address whose cgroups
# are under their own root (cgroupRoot), so that the two kubelets do not
# manage each other's pods. up --nodes 2 on a running one-node cluster adds
# the second node.
#
# containerd, runc, the CNI plugins, etcd and conntrack come from Debian
# (installed here when missing). The machine may be cgroup v1 with a PID 1
# that is not systemd (cgroupfs driver) and without CAP_SYS_RESOURCE
# (containerd's restrict_oom_score_adj).
set -euo pipefail

K8S_VERSION=v1.34.4
W=${TOLL_KUBE_DIR:-/var/tmp/toll-kube}
# Per node (index 0 and 1): its name, the bridge with no ports that holds
# its address, its address, its pods' bridge (CNI bridge plugin), its pods'
# range, and the root of its kubelet's cgroups ("" for the default, /).
NODE_NAMES=(toll-kube-node toll-kube-node2)
NODE_BRIDGES=(tollk-node0 tollk-node1)
NODE_IPS=(10.213.0.1 10.213.0.2)
POD_BRIDGES=(tollk-cni0 tollk-cni1)
POD_CIDRS=(10.213.64.0/20 10.213.80.0/20)
CGROUP_ROOTS=("" /toll-kube-node2)
MAX_NODES=${#NODE_NAMES[@]}
CLUSTER_CIDR=10.213.64.0/19   # both pod ranges
NODE=${NODE_NAMES[0]}         # the control plane's node
NODE_IP=${NODE_IPS[0]}
SERVICE_CIDR=10.213.16.0/20
ETCD_PORT=23790
TOLL_IMAGE=toll:dev
PAUSE_IMAGE=toll.local/pause:1
JAVA_IMAGE=toll-java:dev
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
# What the JVM image holds besides the JDK (examples/java/build.sh and
# examples/java/fetch-agents.sh make them; git ignores them).
JAVA_JARS=("$repo/examples/java/target/toll-java-example.jar" "$repo/examples/java/agents/opentelemetry-javaagent.jar")

log() { echo "kube-cluster: $*" >&2; }
die() { log "$*"; exit 1; }

# Paths outside $W that the components create whatever their flags say;
# up records which of them exist already, down removes the others. (The
# CNI plugins' shared folders, /var/lib/cni and /etc/cni, are podman's too:
# down removes only the cluster's files there.)
OUTSIDE=(/var/lib/kubelet /var/log/pods /var/log/containers /run/containerd /opt/containerd /usr/libexec/kubernetes /root/.kube/cache)

need_root() { [ "$(id -u)" = 0 ] || die "run as root (it starts containerd and a kubelet)"; }

install_deps() {
	local missing=()
	for p in containerd runc containernetworking-plugins etcd-server conntrack iptables openssl iproute2; do
		dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		log "installing ${missing[*]} from apt"
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >&2
	fi
}

build() {
	mkdir -p "$W/bin"
	local bin=$W/bin/k8s stamp
	stamp="$K8S_VERSION $(sha256sum "$here/kube/k8s/go.mod" "$here/kube/k8s/go.sum" "$here/kube/k8s/main.go" | sha256sum | cut -c1-16)"
	if [ -x "$bin" ] && [ "$(cat "$W/bin/k8s.stamp" 2>/dev/null)" = "$stamp" ]; then
		log "using the cached $bin ($K8S_VERSION)"
	else
		log "building Kubernetes $K8S_VERSION (cold: ~10 min of 2 cores, 2.5 GB of memory)"
		local ld="" p start=$SECONDS
		for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
			ld="$ld -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=34 -X $p.gitTreeState=clean"
		done
		(cd "$here/kube/k8s" && go build -ldflags "-s -w $ld" -o "$bin.tmp" .)
		mv "$bin.tmp" "$bin"
		echo "$stamp" > "$W/bin/k8s.stamp"
		log "built $bin in $((SECONDS - start)) s"
	fi
	ln -sf k8s "$W/bin/kubectl"
	if [ ! -x "$W/bin/pause" ]; then
		(cd "$here/kube/pause" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -ldflags "-s -w" -o "$W/bin/pause" .)
	fi
}

# oci_archive NAME OUT FILE... writes an OCI image archive holding FILEs at /
# and running the first, for `ctr images import`: no image builder needed.
oci_archive() {
	local name=$1 out=$2; shift 2
	local d; d=$(mktemp -d)
	chmod 755 "$d"
	cp "$@" "$d/"
	oci_image "$name" "$out" "$d" "{\"Entrypoint\":[\"/$(basename "$1")\"]}"
	rm -rf "$d"
}

# oci_image NAME OUT ROOT CONFIG writes an OCI image archive of the folder
# ROOT as one layer, owned by root, with CONFIG as the image's "config"
# object (JSON: Entrypoint, Env, WorkingDir).
oci_image() {
	local name=$1 out=$2 root=$3 config=$4
	local d; d=$(mktemp -d)
	mkdir -p "$d/oci/blobs/sha256"
	tar -C "$root" --owner=0 --group=0 --numeric-owner --mtime=@0 -cf "$d/layer.tar" .
	local ld ls; ld=$(sha256sum "$d/layer.tar" | cut -d' ' -f1); ls=$(stat -c %s "$d/layer.tar")
	mv "$d/layer.tar" "$d/oci/blobs/sha256/$ld"
	printf '{"architecture":"amd64","os":"linux","config":%s,"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' "$config" "$ld" > "$d/config"
	local cd cs; cd=$(sha256sum "$d/config" | cut -d' ' -f1); cs=$(stat -c %s "$d/config")
	mv "$d/config" "$d/oci/blobs/sha256/$cd"
	printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' "$cd" "$cs" "$ld" "$ls" > "$d/manifest"
	local md ms; md=$(sha256sum "$d/manifest" | cut -d' ' -f1); ms=$(stat -c %s "$d/manifest")
	mv "$d/manifest" "$d/oci/blobs/sha256/$md"
	printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"io.containerd.image.name":"%s"}}]}' "$md" "$ms" "$name" > "$d/oci/index.json"
	echo '{"imageLayoutVersion":"1.0.0"}' > "$d/oci/oci-layout"
	tar -C "$d/oci" -cf "$out" .
	rm -rf "$d"
}

# node_dir I is node I's own folder: containerd, CNI, kubelet.
node_dir() { if [ "$1" = 0 ]; then echo "$W"; else echo "$W/node$(($1 + 1))"; fi; }

# nodes_up is how many nodes the running cluster has (0 when it is down).
nodes_up() {
	if [ -f "$W/run/nodes" ]; then cat "$W/run/nodes"; elif [ -f "$W/run/up" ]; then echo 1; else echo 0; fi
}

# ctr_at I ARGS... runs ctr against node I's containerd.
ctr_at() { local i=$1; shift; ctr --address "$(node_dir "$i")/containerd/containerd.sock" -n k8s.io "$@"; }

# normalized turns an image reference into containerd's full name.
normalized() {
	local r=$1
	case "$r" in
	*/*) case "${r%%/*}" in *.*|*:*|localhost) ;; *) r=docker.io/$r ;; esac ;;
	*) r=docker.io/library/$r ;;
	esac
	echo "$r"
}

# images [I...] builds the pause image and toll's and imports both into
# the containerd of each node I (default: every node that is up).
images() {
	local nodes=("$@") i
	[ ${#nodes[@]} -gt 0 ] || mapfile -t nodes < <(seq 0 $(($(nodes_up) - 1)))
	mkdir -p "$W/images"
	oci_archive "$PAUSE_IMAGE" "$W/images/pause.tar" "$W/bin/pause"
	log "building toll's image $TOLL_IMAGE from $repo"
	(cd "$repo" && CGO_ENABLED=0 go build -o "$W/images/toll" ./cmd/toll)
	oci_archive "$(normalized "$TOLL_IMAGE")" "$W/images/toll.tar" "$W/images/toll"
	rm -f "$W/images/toll"
	for i in "${nodes[@]}"; do
		ctr_at "$i" images import --no-unpack "$W/images/pause.tar" >/dev/null
		ctr_at "$i" images import --no-unpack "$W/images/toll.tar" >/dev/null
		ctr_at "$i" images ls -q | grep -E 'pause|toll' | sed "s/^/${NODE_NAMES[$i]}: /" >&2
	done
	local f
	for f in "${JAVA_JARS[@]}"; do
		if [ ! -f "$f" ]; then
			log "no JVM image $JAVA_IMAGE: $f is missing (examples/java/build.sh, examples/java/fetch-agents.sh)"
			return 0
		fi
	done
	java_image "${nodes[@]}"
}

# java_image [I...] assembles the JVM image $JAVA_IMAGE FROM scratch and
# imports it into the containerd of each node I (default: every node that
# is up): this machine's JDK (the runtime: its launcher, libraries, modules
# and configuration, symbolic links followed) at /opt/java, the shared
# libraries ldd lists for it, a one-line /etc/passwd (root, so that the JVM
# names its hsperfdata folder, which toll's probe reads), an nsswitch.conf
# that reads /etc/hosts before DNS, and a /tmp, and
# the Java example and the OpenTelemetry Java agent in /app, its working
# directory. No registry, no image builder.
java_image() {
	local nodes=("$@") i f
	[ ${#nodes[@]} -gt 0 ] || mapfile -t nodes < <(seq 0 $(($(nodes_up) - 1)))
	for f in "${JAVA_JARS[@]}"; do
		[ -f "$f" ] || die "java-image: $f is missing (examples/java/build.sh, examples/java/fetch-agents.sh)"
	done
	local java home start=$SECONDS
	java=$(readlink -f "$(command -v java)") || die "java-image: no java on PATH"
	home=$(dirname "$(dirname "$java")")
	log "building the JVM image $JAVA_IMAGE from $home and the Java example's jars"
	local root; root=$(mktemp -d)
	chmod 755 "$root"
	mkdir -p "$root/opt/java/bin" "$root/app" "$root/tmp" "$root/etc" "$root/root"
	chmod 1777 "$root/tmp"
	cp -L "$home/bin/java" "$root/opt/java/bin/"
	# Links into /etc the image does not need (a dangling cacerts link
	# when the Debian package of Java's CA certificates is absent) are
	# left out; what the JVM needs is checked below.
	cp -rL "$home/lib" "$home/conf" "$root/opt/java/" 2>/dev/null || true
	[ -f "$home/release" ] && cp -L "$home/release" "$root/opt/java/"
	for f in lib/modules lib/libjli.so lib/server/libjvm.so; do
		[ -f "$root/opt/java/$f" ] || die "java-image: $home/$f was not copied"
	done
	local lib
	while read -r lib; do
		cp -L --parents "$lib" "$root"
	done < <(find "$root/opt/java" -type f \( -path '*/bin/java' -o -name '*.so' \) -exec ldd {} + 2>/dev/null |
		awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// && $2 ~ /^\(/ {print $1}' | grep -v "^$root" | sort -u)
	# glibc loads libgcc_s when a thread exits through pthread_exit.
	for lib in /lib/x86_64-linux-gnu/libgcc_s.so.1 /usr/lib/x86_64-linux-gnu/libgcc_s.so.1; do
		[ -f "$lib" ] && [ ! -e "$root$lib" ] && cp -L --parents "$lib" "$root"
	done
	echo 'root:x:0:0:root:/root:/opt/java/bin/java' > "$root/etc/passwd"
	# The pod's own name is in the /etc/hosts the kubelet mounts; without
	# this file glibc asks DNS first, which a cluster without DNS leaves
	# to time out, and Spring Boot and the agent look the name up.
	printf 'passwd: files\ngroup: files\nhosts: files dns\n' > "$root/etc/nsswitch.conf"
	cp "${JAVA_JARS[@]}" "$root/app/"
	oci_image "$(normalized "$JAVA_IMAGE")" "$W/images/java.tar" "$root" \
		'{"Entrypoint":["/opt/java/bin/java"],"WorkingDir":"/app","Env":["PATH=/opt/java/bin:/usr/bin:/bin","JAVA_HOME=/opt/java","LD_LIBRARY_PATH=/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu"]}'
	log "JVM image: $(du -sh "$root" | cut -f1) in $((SECONDS - start)) s"
	rm -rf "$root"
	for i in "${nodes[@]}"; do
		ctr_at "$i" images import --no-unpack "$W/images/java.tar" >/dev/null
		ctr_at "$i" images ls -q | grep -F "$JAVA_IMAGE" | sed "s/^/${NODE_NAMES[$i]}: /" >&2
	done
	rm -f "$W/images/java.tar"
}

certs() {
	local p=$W/pki
	[ -f "$p/admin.crt" ] && return
	mkdir -p "$p"
	openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=toll-kube-ca" -keyout "$p/ca.key" -out "$p/ca.crt" 2>/dev/null
	openssl genrsa -out "$p/sa.key" 2048 2>/dev/null
	openssl rsa -in "$p/sa.key" -pubout -out "$p/sa.pub" 2>/dev/null
	local svc_ip; svc_ip=$(echo "$SERVICE_CIDR" | awk -F'[./]' '{print $1"."$2"."$3"."$4+1}')
	printf 'subjectAltName=IP:%s,IP:127.0.0.1,IP:%s,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:localhost\n' "$NODE_IP" "$svc_ip" > "$p/apiserver.ext"
	cert apiserver "/CN=kube-apiserver" "$p/apiserver.ext"
	# One client identity in system:masters for the control plane, the
	# node and the user: a test cluster on one machine.
	cert admin "/O=system:masters/CN=toll-kube-admin" ""
}

cert() {
	local p=$W/pki name=$1 subj=$2 ext=$3
	openssl req -newkey rsa:2048 -nodes -subj "$subj" -keyout "$p/$name.key" -out "$p/$name.csr" 2>/dev/null
	openssl x509 -req -in "$p/$name.csr" -CA "$p/ca.crt" -CAkey "$p/ca.key" -CAcreateserial -days 30 ${ext:+-extfile "$ext"} -out "$p/$name.crt" 2>/dev/null
}

kubeconfig() {
	cat > "$W/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: toll-kube
  cluster: {server: "https://$NODE_IP:6443", certificate-authority: "$W/pki/ca.crt"}
users:
- name: admin
  user: {client-certificate: "$W/pki/admin.crt", client-key: "$W/pki/admin.key"}
contexts:
- name: toll-kube
  context: {cluster: toll-kube, user: admin}
current-context: toll-kube
EOF
}

# node_configs I writes node I's containerd, CNI and kubelet configuration
# under its own folder.
node_configs() {
	local i=$1 d; d=$(node_dir "$1")
	mkdir -p "$d/containerd" "$d/cni/net.d" "$d/kubelet" "$W/logs"
	cat > "$d/containerd/config.toml" <<EOF
version = 2
root = "$d/containerd/root"
state = "$d/containerd/state"
[grpc]
  address = "$d/containerd/containerd.sock"
[ttrpc]
  address = "$d/containerd/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$d/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  enable_cdi = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$d/containerd/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$d/cni/net.d"
EOF
	cat > "$d/cni/net.d/10-toll-kube.conflist" <<EOF
{"cniVersion": "0.4.0", "name": "toll-kube", "plugins": [
  {"type": "bridge", "bridge": "${POD_BRIDGES[$i]}", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "${POD_CIDRS[$i]}"}]], "routes": [{"dst": "0.0.0.0/0"}], "dataDir": "$d/cni/ipam"}}]}
EOF
	# The first node's kubelet answers its health checks on loopback, a
	# second one on its own address (the port is fixed).
	local healthz=127.0.0.1
	[ "$i" = 0 ] || healthz=${NODE_IPS[$i]}
	cat > "$d/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
address: ${NODE_IPS[$i]}
readOnlyPort: 0
healthzBindAddress: $healthz
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: "$W/pki/ca.crt"}
authorization: {mode: AlwaysAllow}
containerRuntimeEndpoint: "unix://$d/containerd/containerd.sock"
podLogsDir: "$d/logs/pods"
volumePluginDir: "$d/kubelet/volume-plugins"
resolvConf: /etc/resolv.conf
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
maxPods: 60
EOF
	if [ -n "${CGROUP_ROOTS[$i]}" ]; then
		echo "cgroupRoot: ${CGROUP_ROOTS[$i]}" >> "$d/kubelet/config.yaml"
	fi
}

# start NAME CMD... runs CMD in the background with its log and pid in $W.
start() {
	local name=$1; shift
	setsid "$@" > "$W/logs/$name.log" 2>&1 < /dev/null &
	echo $! > "$W/run/$name.pid"
}

wait_for() {
	local what=$1 tries=$2; shift 2
	for _ in $(seq "$tries"); do
		if "$@" >/dev/null 2>&1; then return 0; fi
		sleep 1
	done
	die "$what did not come up in ${tries}s; see $W/logs"
}

# sfx I is the suffix of node I's process names: "" for the first node
# (containerd, kubelet), -node2 for the second.
sfx() { if [ "$1" = 0 ]; then echo ""; else echo "-node$(($1 + 1))"; fi; }

# start_runtime I gives node I its address (a bridge with no ports), its
# configuration, its kubelet's cgroup root, and starts its containerd.
start_runtime() {
	local i=$1 d h; d=$(node_dir "$1")
	node_configs "$i"
	# A kubelet's cgroupRoot must exist in every hierarchy before it
	# starts; the second node's keeps its pods apart from the first's
	# (kubepods under /).
	if [ -n "${CGROUP_ROOTS[$i]}" ]; then
		for h in /sys/fs/cgroup/*/; do mkdir -p "$h${CGROUP_ROOTS[$i]#/}"; done
	fi
	ip link add "${NODE_BRIDGES[$i]}" type bridge
	ip addr add "${NODE_IPS[$i]}/32" dev "${NODE_BRIDGES[$i]}"
	ip link set "${NODE_BRIDGES[$i]}" up
	start "containerd$(sfx "$i")" containerd --config "$d/containerd/config.toml"
}

# start_kubelet I starts node I's kubelet; it registers the node.
start_kubelet() {
	local i=$1 d; d=$(node_dir "$1")
	start "kubelet$(sfx "$i")" env K8S_CONTAINER_LOGS_DIR="$d/logs/containers" "$W/bin/k8s" kubelet --config "$d/kubelet/config.yaml" \
		--kubeconfig "$W/kubeconfig" --root-dir "$d/kubelet/root" --cert-dir "$d/kubelet/pki" \
		--hostname-override "${NODE_NAMES[$i]}" --node-ip "${NODE_IPS[$i]}"
}

# up [--nodes N] starts the cluster with N nodes (1, the default, or 2), or
# adds the second node to a running one-node cluster.
up() {
	local want=1
	while [ $# -gt 0 ]; do
		case "$1" in
		--nodes) want=${2:-}; shift 2 || shift ;;
		--nodes=*) want=${1#--nodes=}; shift ;;
		*) die "up: unknown argument $1 (usage: up [--nodes 1|2])" ;;
		esac
	done
	case "$want" in 1 | 2) ;; *) die "up: --nodes ${want:-(none)}: this machine runs 1 or 2 nodes" ;; esac
	need_root
	install_deps
	build
	local have i k=$W/bin/k8s start=$SECONDS
	have=$(nodes_up)
	if [ "$have" -ge "$want" ]; then
		log "already up with $have node(s) ($W); down first to restart"
		env_
		return
	fi
	if [ "$have" = 0 ]; then
		mkdir -p "$W/run" "$W/logs"
		: > "$W/run/outside"
		for p in "${OUTSIDE[@]}" /var/lib/cni/results /var/lib/cni; do
			if [ -e "$p" ]; then echo "$p" >> "$W/run/outside"; fi
		done
		iptables-save > "$W/run/iptables.before"
		ip6tables-save > "$W/run/ip6tables.before" 2>/dev/null || true
		touch "$W/run/up"
		certs
		kubeconfig
		start etcd etcd --name toll-kube --data-dir "$W/etcd" \
			--listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
			--listen-peer-urls http://127.0.0.1:23800 --initial-advertise-peer-urls http://127.0.0.1:23800 \
			--initial-cluster toll-kube=http://127.0.0.1:23800
	fi
	for i in $(seq "$have" $((want - 1))); do start_runtime "$i"; done
	echo "$want" > "$W/run/nodes"
	if [ "$have" = 0 ]; then
		start kube-apiserver "$k" kube-apiserver --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
			--bind-address "$NODE_IP" --advertise-address "$NODE_IP" --secure-port 6443 \
			--service-cluster-ip-range "$SERVICE_CIDR" --allow-privileged \
			--client-ca-file "$W/pki/ca.crt" --tls-cert-file "$W/pki/apiserver.crt" --tls-private-key-file "$W/pki/apiserver.key" \
			--service-account-key-file "$W/pki/sa.pub" --service-account-signing-key-file "$W/pki/sa.key" \
			--service-account-issuer https://kubernetes.default.svc --authorization-mode Node,RBAC \
			--kubelet-client-certificate "$W/pki/admin.crt" --kubelet-client-key "$W/pki/admin.key" \
			--kubelet-preferred-address-types InternalIP,Hostname --cert-dir "$W/pki/apiserver-serving"
	fi
	for i in $(seq "$have" $((want - 1))); do
		wait_for "containerd$(sfx "$i")" 30 test -S "$(node_dir "$i")/containerd/containerd.sock"
	done
	if [ "$have" = 0 ]; then
		wait_for kube-apiserver 90 "$k" kubectl --kubeconfig "$W/kubeconfig" get --raw /readyz
		start kube-controller-manager "$k" kube-controller-manager --kubeconfig "$W/kubeconfig" \
			--leader-elect=false --bind-address 127.0.0.1 --service-account-private-key-file "$W/pki/sa.key" \
			--root-ca-file "$W/pki/ca.crt" --use-service-account-credentials=false \
			--flex-volume-plugin-dir "$W/kubelet/volume-plugins" --service-cluster-ip-range "$SERVICE_CIDR"
		start kube-scheduler "$k" kube-scheduler --kubeconfig "$W/kubeconfig" --leader-elect=false --bind-address 127.0.0.1
	fi
	images $(seq "$have" $((want - 1)))
	local started=()
	for i in $(seq "$have" $((want - 1))); do
		start_kubelet "$i"
		started[i]=$SECONDS
	done
	if [ "$have" = 0 ]; then
		# One kube-proxy for every node: the nodes share this machine's
		# network namespace, so its rules serve the pods of both bridges.
		start kube-proxy "$k" kube-proxy --kubeconfig "$W/kubeconfig" --hostname-override "$NODE" \
			--cluster-cidr "$CLUSTER_CIDR" --proxy-mode iptables --conntrack-max-per-core 0 \
			--bind-address "$NODE_IP" --metrics-bind-address 127.0.0.1:10249 --healthz-bind-address 127.0.0.1:10256
	fi
	for i in $(seq "$have" $((want - 1))); do
		wait_for "node ${NODE_NAMES[$i]}" 120 "$k" kubectl --kubeconfig "$W/kubeconfig" wait --for=condition=Ready "node/${NODE_NAMES[$i]}" --timeout=1s
		log "node ${NODE_NAMES[$i]} (${NODE_IPS[$i]}, pods ${POD_CIDRS[$i]}) Ready $((SECONDS - started[i])) s after its kubelet started"
	done
	wait_for "the default service account" 60 "$k" kubectl --kubeconfig "$W/kubeconfig" get serviceaccount default
	log "up in $((SECONDS - start)) s: $want node(s), services $SERVICE_CIDR"
	env_
}

# down stops every node there may be, whatever up started.
down() {
	need_root
	[ -d "$W/run" ] || { log "not up ($W)"; return 0; }
	local k=$W/bin/k8s i name
	if [ -f "$W/run/kube-apiserver.pid" ] && [ -x "$k" ]; then
		# Delete the pods first, so that the kubelets stop their containers
		# and tear down their networks through CNI.
		"$k" kubectl --kubeconfig "$W/kubeconfig" delete jobs,pods,services -A --all --grace-period=1 --timeout=30s --request-timeout=40s >/dev/null 2>&1 || true
	fi
	stop kube-proxy
	for i in $(seq 0 $((MAX_NODES - 1))); do stop "kubelet$(sfx "$i")"; done
	for name in kube-scheduler kube-controller-manager; do stop "$name"; done
	for i in $(seq 0 $((MAX_NODES - 1))); do
		[ -S "$(node_dir "$i")/containerd/containerd.sock" ] || continue
		# Whatever the kubelet left: every container and sandbox.
		local t
		for t in $(ctr_at "$i" tasks ls -q 2>/dev/null); do ctr_at "$i" tasks kill -a -s SIGKILL "$t" >/dev/null 2>&1 || true; done
		sleep 1
		for t in $(ctr_at "$i" tasks ls -q 2>/dev/null); do ctr_at "$i" tasks delete -f "$t" >/dev/null 2>&1 || true; done
		for t in $(ctr_at "$i" containers ls -q 2>/dev/null); do ctr_at "$i" containers delete "$t" >/dev/null 2>&1 || true; done
	done
	stop kube-apiserver
	for i in $(seq 0 $((MAX_NODES - 1))); do stop "containerd$(sfx "$i")"; done
	stop etcd
	# Shims and containers outlive containerd: kill what runs from $W.
	for pid in $(pgrep -f "containerd-shim.*$W" || true); do kill -9 "$pid" 2>/dev/null || true; done
	# Mounts under the work folder (volumes, rootfs, netns, shm), deepest first.
	awk -v w="$W/" 'index($5, w) == 1 {print $5}' /proc/self/mountinfo | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
	for dev in "${POD_BRIDGES[@]}" "${NODE_BRIDGES[@]}"; do ip link delete "$dev" 2>/dev/null || true; done
	# veths whose other end was in a pod's netns are gone with it; any left
	# on the pods' bridges went with the bridges.
	[ -f "$W/run/iptables.before" ] && restore_iptables iptables "$W/run/iptables.before"
	[ -f "$W/run/ip6tables.before" ] && restore_iptables ip6tables "$W/run/ip6tables.before"
	for i in $(seq 0 $((MAX_NODES - 1))); do conntrack -D -s "${POD_CIDRS[$i]}" >/dev/null 2>&1 || true; done
	for p in "${OUTSIDE[@]}"; do
		if [ -e "$p" ] && ! grep -qxF "$p" "$W/run/outside" 2>/dev/null; then
			awk -v w="$p/" 'index($5, w) == 1 {print $5}' /proc/self/mountinfo | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
			rm -rf "$p"
		fi
	done
	# The kubelets' cgroups (cgroupfs driver), emptied with their pods, and
	# the second node's cgroup root.
	local cg
	for cg in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do
		[ -d "$cg" ] && find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null || true
	done
	for i in $(seq 0 $((MAX_NODES - 1))); do
		[ -n "${CGROUP_ROOTS[$i]}" ] || continue
		for cg in /sys/fs/cgroup/*/"${CGROUP_ROOTS[$i]#/}"; do
			[ -d "$cg" ] && find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null || true
		done
	done
	rm -f /var/lib/cni/results/toll-kube-* 2>/dev/null || true
	for p in /var/lib/cni/results /var/lib/cni; do
		grep -qxF "$p" "$W/run/outside" 2>/dev/null || rmdir "$p" 2>/dev/null || true
	done
	# Keep only the built binaries (bin/).
	find "$W" -mindepth 1 -maxdepth 1 ! -name bin -exec rm -rf {} +
	log "down: $W holds only bin/"
}

# restore_iptables removes what the kubelet and kube-proxy added: their
# KUBE-* chains and the rules that jump to them, and rules naming the
# cluster's addresses, except those that were there before up ($1).
# Others' rules (podman's, docker's) stay, added since up or not.
restore_iptables() {
	local ipt=$1 before=$2 t line chain
	for t in filter nat mangle raw; do
		"$ipt-save" -t "$t" 2>/dev/null | grep '^-A ' | grep -E -- '-j KUBE-|^-A KUBE-|10\.213\.' | while read -r line; do
			chain=$(echo "$line" | awk '{print $2}')
			case "$chain" in KUBE-*) continue ;; esac # goes with its chain below
			grep -qxF -- "$line" "$before" && continue
			eval "$ipt -t $t -D ${line#-A }" 2>/dev/null || true
		done || true
		for chain in $("$ipt-save" -t "$t" 2>/dev/null | awk '/^:KUBE-/{print substr($1, 2)}'); do
			grep -q "^:$chain " "$before" || "$ipt" -t "$t" -F "$chain" 2>/dev/null || true
		done
		for chain in $("$ipt-save" -t "$t" 2>/dev/null | awk '/^:KUBE-/{print substr($1, 2)}'); do
			grep -q "^:$chain " "$before" || "$ipt" -t "$t" -X "$chain" 2>/dev/null || true
		done
	done
}

stop() {
	local f=$W/run/$1.pid pid
	[ -f "$f" ] || return 0
	pid=$(cat "$f")
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
		kill -KILL -- "-$pid" 2>/dev/null || true
	fi
	rm -f "$f"
}

# env_ prints the exports of a shell that uses this cluster: its kubeconfig
# and binaries, and the defaults of the flags toll run --kubernetes needs
# on it (its images are imported, never pulled; it runs no duet), which
# toll reads (--toll-image, --image-pull-policy, --sequential).
env_() {
	echo "export TOLL_KUBECONFIG=$W/kubeconfig KUBECONFIG=$W/kubeconfig PATH=$W/bin:\$PATH" \
		"TOLL_KUBE_TOLL_IMAGE=$TOLL_IMAGE TOLL_KUBE_IMAGE_PULL_POLICY=Never TOLL_KUBE_SEQUENTIAL=true"
}

case "${1:-}" in
build) install_deps; build ;;
up) shift; up "$@" ;;
down) down ;;
env) [ -f "$W/kubeconfig" ] || die "not up: $0 up"; env_ ;;
images) [ "$(nodes_up)" -gt 0 ] || die "not up: $0 up"; images ;;
java-image) [ "$(nodes_up)" -gt 0 ] || die "not up: $0 up"; mkdir -p "$W/images"; java_image ;;
*) echo "usage: $0 build|up [--nodes 1|2]|down|env|images|java-image" >&2; exit 2 ;;
esac
