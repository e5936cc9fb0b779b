local kube = import 'kube.libsonnet';
{
  values:: { namespace: 'monitoring', components: ['api', 'worker'], replicas: 2 },
  local v = self.values,
  components:: {
    [c]: {
      deployment: kube.deployment(c, 'registry.example/%s:1.0' % c, v.replicas) + { metadata+: { namespace: v.namespace } },
      service: kube.service(self.deployment) + { metadata+: { namespace: v.namespace } },
    }
    for c in v.components
  },
}
