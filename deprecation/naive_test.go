package deprecation

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"gopkg.in/yaml.v3"
)

// naiveCheck is Check without the pre-scan: it parses every document as
// YAML, as pluto and kdave do. Tests compare the two; the benchmark
// measures the difference. It stops at the first document the YAML
// decoder cannot parse, since the decoder cannot resynchronise.
func naiveCheck(c *Checker, name string, data []byte) (Result, error) {
	res := Result{Source: name}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for i := 0; ; i++ {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			if errors.Is(err, io.EOF) {
				return res, nil
			}
			return res, err
		}
		if emptyDocument(&n) {
			i-- // only documents with content count, as for Check
			continue
		}
		res.Documents++
		res.Parsed++
		fail := func(err error) {
			res.Errors = append(res.Errors, &DocumentError{Source: name, Index: i, Line: n.Line, Err: err})
		}
		obj, err := readObject(&n)
		if err != nil {
			fail(err)
			continue
		}
		c.addDocument(&res, i, n.Line, obj, fail)
	}
}

// emptyDocument reports whether n is a document with no content (only
// comments, or nothing, between its markers): the decoder gives it as a
// plain null scalar with no text, which "~", "null", an empty quoted
// string and a tag or anchor alone are not.
func emptyDocument(n *yaml.Node) bool {
	if n.Kind != yaml.DocumentNode || len(n.Content) != 1 {
		return false
	}
	c := n.Content[0]
	return c.Kind == yaml.ScalarNode && c.Tag == "!!null" && c.Value == "" && c.Style == 0 && c.Anchor == ""
}

// releaseTemplate is one Helm-style release manifest of 25 objects. %[1]s
// is the release name; %[2]s and %[3]s are the apiVersions of the
// PodDisruptionBudget and the CronJob, so a release can be made to use
// deprecated APIs.
const releaseTemplate = `---
# Source: %[1]s/templates/serviceaccount.yaml
apiVersion: v1
kind: ServiceAccount
metadata:
  name: %[1]s
  labels:
    app.kubernetes.io/name: %[1]s
    app.kubernetes.io/managed-by: Helm
---
# Source: %[1]s/templates/configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: %[1]s-config
data:
  app.yaml: |
    server:
      port: 8080
      # a nested document must not confuse the scanner
    ---
    apiVersion: extensions/v1beta1
  LOG_LEVEL: info
---
# Source: %[1]s/templates/secret.yaml
apiVersion: v1
kind: Secret
metadata:
  name: %[1]s-secret
type: Opaque
data:
  password: c2VjcmV0
---
# Source: %[1]s/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: %[1]s
spec:
  type: ClusterIP
  ports:
    - port: 80
      targetPort: http
      protocol: TCP
      name: http
  selector:
    app.kubernetes.io/name: %[1]s
---
# Source: %[1]s/templates/service-headless.yaml
apiVersion: v1
kind: Service
metadata:
  name: %[1]s-headless
spec:
  clusterIP: None
  ports:
    - port: 5432
      name: db
  selector:
    app.kubernetes.io/name: %[1]s-db
---
# Source: %[1]s/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
  labels:
    app.kubernetes.io/name: %[1]s
spec:
  replicas: 2
  selector:
    matchLabels:
      app.kubernetes.io/name: %[1]s
  template:
    metadata:
      labels:
        app.kubernetes.io/name: %[1]s
      annotations:
        checksum/config: 3b1f0c5e9a7d4e2f8c6b1a0d9e8f7c6b5a4d3c2b1a0f9e8d7c6b5a4d3c2b1a0f
    spec:
      serviceAccountName: %[1]s
      securityContext:
        runAsNonRoot: true
        runAsUser: 1000
      containers:
        - name: app
          image: "registry.example.com/%[1]s:1.4.2"
          imagePullPolicy: IfNotPresent
          ports:
            - name: http
              containerPort: 8080
              protocol: TCP
          env:
            - name: LOG_LEVEL
              valueFrom:
                configMapKeyRef:
                  name: %[1]s-config
                  key: LOG_LEVEL
          livenessProbe:
            httpGet:
              path: /healthz
              port: http
          readinessProbe:
            httpGet:
              path: /ready
              port: http
          resources:
            limits:
              cpu: 500m
              memory: 256Mi
            requests:
              cpu: 100m
              memory: 128Mi
---
# Source: %[1]s/templates/worker.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s-worker
spec:
  replicas: 1
  selector:
    matchLabels:
      app.kubernetes.io/name: %[1]s-worker
  template:
    metadata:
      labels:
        app.kubernetes.io/name: %[1]s-worker
    spec:
      containers:
        - name: worker
          image: "registry.example.com/%[1]s-worker:1.4.2"
          args: ["--queue", "default", "--concurrency", "4"]
          resources:
            requests:
              cpu: 50m
              memory: 64Mi
---
# Source: %[1]s/templates/db.yaml
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: %[1]s-db
spec:
  serviceName: %[1]s-headless
  replicas: 1
  selector:
    matchLabels:
      app.kubernetes.io/name: %[1]s-db
  template:
    metadata:
      labels:
        app.kubernetes.io/name: %[1]s-db
    spec:
      containers:
        - name: postgres
          image: postgres:16
          ports:
            - containerPort: 5432
          volumeMounts:
            - name: data
              mountPath: /var/lib/postgresql/data
  volumeClaimTemplates:
    - metadata:
        name: data
      spec:
        accessModes: ["ReadWriteOnce"]
        resources:
          requests:
            storage: 10Gi
---
# Source: %[1]s/templates/agent.yaml
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: %[1]s-agent
spec:
  selector:
    matchLabels:
      app.kubernetes.io/name: %[1]s-agent
  template:
    metadata:
      labels:
        app.kubernetes.io/name: %[1]s-agent
    spec:
      containers:
        - name: agent
          image: registry.example.com/agent:0.9.1
---
# Source: %[1]s/templates/role.yaml
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: %[1]s
rules:
- apiGroups: [""]
  resources: ["configmaps", "secrets"]
  verbs: ["get", "list", "watch"]
---
# Source: %[1]s/templates/rolebinding.yaml
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: %[1]s
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: %[1]s
subjects:
- kind: ServiceAccount
  name: %[1]s
---
# Source: %[1]s/templates/clusterrole.yaml
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: %[1]s-reader
rules:
- apiGroups: [""]
  resources: ["nodes"]
  verbs: ["get", "list"]
---
# Source: %[1]s/templates/clusterrolebinding.yaml
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: %[1]s-reader
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: %[1]s-reader
subjects:
- kind: ServiceAccount
  name: %[1]s
  namespace: default
---
# Source: %[1]s/templates/ingress.yaml
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: %[1]s
  annotations:
    cert-manager.io/cluster-issuer: letsencrypt
spec:
  ingressClassName: nginx
  tls:
    - hosts: ["%[1]s.example.com"]
      secretName: %[1]s-tls
  rules:
    - host: "%[1]s.example.com"
      http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service:
                name: %[1]s
                port:
                  name: http
---
# Source: %[1]s/templates/hpa.yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: %[1]s
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: %[1]s
  minReplicas: 2
  maxReplicas: 10
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: 80
---
# Source: %[1]s/templates/pdb.yaml
apiVersion: %[2]s
kind: PodDisruptionBudget
metadata:
  name: %[1]s
spec:
  minAvailable: 1
  selector:
    matchLabels:
      app.kubernetes.io/name: %[1]s
---
# Source: %[1]s/templates/cronjob.yaml
apiVersion: %[3]s
kind: CronJob
metadata:
  name: %[1]s-cleanup
spec:
  schedule: "17 3 * * *"
  concurrencyPolicy: Forbid
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
            - name: cleanup
              image: "registry.example.com/%[1]s:1.4.2"
              args: ["cleanup", "--older-than", "720h"]
---
# Source: %[1]s/templates/migrate.yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: %[1]s-migrate
  annotations:
    "helm.sh/hook": pre-upgrade
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: migrate
          image: "registry.example.com/%[1]s:1.4.2"
          args: ["migrate"]
---
# Source: %[1]s/templates/networkpolicy.yaml
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: %[1]s
spec:
  podSelector:
    matchLabels:
      app.kubernetes.io/name: %[1]s
  policyTypes: ["Ingress"]
  ingress:
    - from:
        - namespaceSelector:
            matchLabels:
              kubernetes.io/metadata.name: ingress-nginx
---
# Source: %[1]s/templates/pvc.yaml
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: %[1]s-uploads
spec:
  accessModes: ["ReadWriteMany"]
  storageClassName: nfs
  resources:
    requests:
      storage: 5Gi
---
# Source: %[1]s/templates/servicemonitor.yaml
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: %[1]s
spec:
  selector:
    matchLabels:
      app.kubernetes.io/name: %[1]s
  endpoints:
    - port: http
      interval: 30s
---
# Source: %[1]s/templates/priorityclass.yaml
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: %[1]s-high
value: 100000
globalDefault: false
---
# Source: %[1]s/templates/limitrange.yaml
apiVersion: v1
kind: LimitRange
metadata:
  name: %[1]s
spec:
  limits:
    - type: Container
      default:
        cpu: 200m
---
# Source: %[1]s/templates/resourcequota.yaml
apiVersion: v1
kind: ResourceQuota
metadata:
  name: %[1]s
spec:
  hard:
    pods: "50"
---
# Source: %[1]s/templates/tests/test-connection.yaml
apiVersion: v1
kind: Pod
metadata:
  name: "%[1]s-test-connection"
  annotations:
    "helm.sh/hook": test
spec:
  containers:
    - name: wget
      image: busybox
      command: ['wget']
      args: ['%[1]s:80']
  restartPolicy: Never
`

// docsPerRelease is the number of documents in releaseTemplate.
const docsPerRelease = 25

// genManifests returns releases release manifests in one stream. Every
// legacyEvery-th release (0: none) uses policy/v1beta1 and batch/v1beta1,
// two objects that the default rules report.
func genManifests(releases, legacyEvery int) []byte {
	var b strings.Builder
	for i := range releases {
		pdb, cron := "policy/v1", "batch/v1"
		if legacyEvery > 0 && i%legacyEvery == 0 {
			pdb, cron = "policy/v1beta1", "batch/v1beta1"
		}
		fmt.Fprintf(&b, releaseTemplate, fmt.Sprintf("app-%05d", i), pdb, cron)
	}
	return []byte(b.String())
}
