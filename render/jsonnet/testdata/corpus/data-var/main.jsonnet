local r = std.extVar('regatta');
{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'facts-' + r.cluster.name, labels: r.cluster.labels }, data: { version: r.cluster.kubernetesVersion, region: r.cluster.values.region } }
