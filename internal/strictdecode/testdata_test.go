package strictdecode

// invYAML is the invalid Deployment of upstream's KEP-2885 integration
// test (k/k test/integration/apiserver/field_validation_test.go): a
// Deployment with metadata.name twice, metadata.unknownMeta, spec.unknown1,
// spec.unknownDupe twice, spec.paused twice, and in containers[0] an
// unknownNested key and imagePullPolicy twice; the duplicates are on lines
// 5, 12, 14 and 28.
const invYAML = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: test-deployment
  name: test-deployment
  unknownMeta: metaVal
  labels:
    app: nginx
spec:
  unknown1: val1
  unknownDupe: valDupe
  unknownDupe: valDupe2
  paused: true
  paused: false
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx:latest
        unknownNested: val1
        imagePullPolicy: Always
        imagePullPolicy: Never
        ports:
        - containerPort: 80
          protocol: TCP
`

// invJSON is the same content as JSON, as that test also sends it.
const invJSON = `{
  "apiVersion": "apps/v1",
  "kind": "Deployment",
  "metadata": {
    "name": "test-deployment",
    "name": "test-deployment",
    "unknownMeta": "metaVal",
    "labels": {"app": "nginx"}
  },
  "spec": {
    "unknown1": "val1",
    "unknownDupe": "valDupe",
    "unknownDupe": "valDupe2",
    "paused": true,
    "paused": false,
    "selector": {"matchLabels": {"app": "nginx"}},
    "template": {
      "metadata": {"labels": {"app": "nginx"}},
      "spec": {
        "containers": [{
          "name": "nginx",
          "image": "nginx:latest",
          "unknownNested": "val1",
          "imagePullPolicy": "Always",
          "imagePullPolicy": "Never",
          "ports": [{"containerPort": 80, "protocol": "TCP"}]
        }]
      }
    }
  }
}
`

// typicalYAML is an ordinary Deployment, for benchmarks and fuzz seeds.
const typicalYAML = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  labels:
    app.kubernetes.io/name: web
    app.kubernetes.io/part-of: shop
  annotations:
    deployment.kubernetes.io/revision: "3"
spec:
  replicas: 3
  revisionHistoryLimit: 5
  selector:
    matchLabels:
      app.kubernetes.io/name: web
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxSurge: 25%
      maxUnavailable: 0
  template:
    metadata:
      labels:
        app.kubernetes.io/name: web
    spec:
      dnsPolicy: Custom
      dnsParams:
        custom:
          search: ["$(NAMESPACE).svc.$(CLUSTER)", "svc.$(CLUSTER)", "$(HOST)"]
          options: ["ndots:2"]
      dnsConfig:
        nameservers: ["10.96.0.10"]
        options:
        - name: timeout
          value: "2"
      serviceAccountName: web
      securityContext:
        runAsNonRoot: true
        fsGroup: 2000
      containers:
      - name: web
        image: registry.example.com/shop/web:1.4.2
        imagePullPolicy: IfNotPresent
        args: ["--port=8080", "--log-level=info"]
        ports:
        - name: http
          containerPort: 8080
          protocol: TCP
        env:
        - name: GOMAXPROCS
          value: "2"
        - name: POD_NAME
          valueFrom:
            fieldRef:
              fieldPath: metadata.name
        resources:
          requests:
            cpu: 250m
            memory: 256Mi
          limits:
            memory: 512Mi
        readinessProbe:
          httpGet:
            path: /healthz
            port: http
          initialDelaySeconds: 5
          periodSeconds: 10
        volumeMounts:
        - name: config
          mountPath: /etc/web
          readOnly: true
      volumes:
      - name: config
        configMap:
          name: web-config
`
