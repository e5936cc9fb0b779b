{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'single', annotations: { 'note': 'ünïcödé "quoted" \\ back\tslash' } }, data: { 'a.txt': std.join('\n', ['x', 'y']), empty: '' } }
