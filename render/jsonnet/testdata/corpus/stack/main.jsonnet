local stack = (import 'kube-lib/stack.libsonnet') + {
  values+:: { namespace: 'observability', components+: ['grafana'] },
};
{ ['%s-%s' % [c, k]]: stack.components[c][k] for c in std.objectFields(stack.components) for k in std.objectFields(stack.components[c]) }
+ { namespace: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: stack.values.namespace } } }
