local settings = std.parseYaml(importstr '../conf/settings.yaml');
local h = import '../lib/helpers.libsonnet';
[
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: h.helper('cm') },
    data: { motd: importstr '../conf/motd.txt', 'settings.yaml': std.manifestYamlDoc(settings), 'blob': std.base64(importbin '../conf/blob.bin'), ini: std.manifestIni({ main: { a: 1 }, sections: { s: { b: true } } }) } },
  { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'imp' }, spec: { replicas: settings.replicas, template: { spec: { containers: [{ name: f, image: 'x', resources: { limits: settings.limits } } for f in settings.features] } } } },
]
