{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'order' }, data: { who: (import 'who.libsonnet').who, only: (import 'only.libsonnet').only } }
