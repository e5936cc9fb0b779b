function(name, replicas=1, tags={})
  {
    apiVersion: 'apps/v1', kind: 'Deployment',
    metadata: { name: name, labels: { env: std.extVar('env') } + tags },
    spec: { replicas: replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: name, image: std.extVar('image') }] } } },
  }
