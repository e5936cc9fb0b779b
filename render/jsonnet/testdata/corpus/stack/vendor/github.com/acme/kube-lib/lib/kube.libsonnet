{
  deployment(name, image, replicas=1):: {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: name, labels: { 'app.kubernetes.io/name': name } },
    spec: {
      replicas: replicas,
      selector: { matchLabels: { 'app.kubernetes.io/name': name } },
      template: {
        metadata: { labels: { 'app.kubernetes.io/name': name } },
        spec: { containers: [{ name: name, image: image, ports: [{ containerPort: 8080 }] }] },
      },
    },
  },
  service(d):: {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: d.metadata.name, labels: d.metadata.labels },
    spec: { selector: d.spec.selector.matchLabels, ports: [{ port: 80, targetPort: 8080 }] },
  },
}
