package render

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"helm.sh/helm/v3/pkg/strvals"
	"sigs.k8s.io/yaml"

	"github.com/regatta-dev/regatta/spec"
)

// errNotFound marks a missing file, object or key of a data reference.
var errNotFound = errors.New("not found")

// readData returns the data of the ConfigMap or Secret a reference names,
// Secret values decoded. The file's path is a template; a SOPS-encrypted
// file is decrypted. With Optional, a missing file or object is no data.
func (a *addonRender) readData(field string, ref spec.DataReference) (map[string]string, error) {
	file, raw, err := a.readDataFile(field, ref)
	if file == "" || err != nil {
		return nil, err
	}
	return a.dataOf(field, ref, file, raw)
}

// readDataFile reads the file of a data reference, as it is in the
// repository ("" and nil for a missing optional file).
func (a *addonRender) readDataFile(field string, ref spec.DataReference) (string, []byte, error) {
	file, err := a.pathField(field+".path", ref.Path)
	if err != nil {
		return "", nil, err
	}
	raw, err := a.fs.ReadFile(file)
	if err != nil {
		if ref.Optional && notExist(err) {
			return "", nil, nil
		}
		return "", nil, a.fieldError(field+".path", describePathError(file, err))
	}
	return file, raw, nil
}

// dataOf decrypts a data reference's file and returns its object's data.
func (a *addonRender) dataOf(field string, ref spec.DataReference, file string, raw []byte) (map[string]string, error) {
	raw, err := a.decrypt(file, raw)
	if err != nil {
		return nil, err
	}
	objs, err := decodeObjects(file, raw)
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		if o.GetKind() == ref.Kind && o.GetName() == ref.Name {
			data, err := objectData(o)
			if err != nil {
				return nil, &Error{File: file, Err: fmt.Errorf("%s/%s: %w", ref.Kind, ref.Name, err)}
			}
			return data, nil
		}
	}
	if ref.Optional {
		return nil, nil
	}
	return nil, a.fieldError(field, fmt.Errorf("%s has no %s named %s: %w", file, ref.Kind, ref.Name, errNotFound))
}

// objectData flattens a ConfigMap's data and binaryData, or a Secret's
// data (base64-decoded) and stringData, into one map.
func objectData(o Object) (map[string]string, error) {
	out := map[string]string{}
	plain, encoded := "data", "binaryData"
	if o.GetKind() == "Secret" {
		plain, encoded = "stringData", "data"
	}
	for _, f := range []string{encoded, plain} {
		m, _ := o.Object[f].(map[string]any)
		for k, v := range m {
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("%s.%s is not a string", f, k)
			}
			if f == encoded {
				b, err := base64.StdEncoding.DecodeString(s)
				if err != nil {
					return nil, fmt.Errorf("%s.%s: %w", f, k, err)
				}
				s = string(b)
			}
			out[k] = s
		}
	}
	return out, nil
}

// valuesFrom reads the helm.valuesFrom references, in order, into values
// layers: a key's YAML merged at the root, or with targetPath its text
// set at that path, as Flux's HelmRelease does.
func (a *addonRender) valuesFrom(field string, refs []spec.DataReference) ([]map[string]any, error) {
	var layers []map[string]any
	for i, ref := range refs {
		f := fmt.Sprintf("%s.valuesFrom[%d]", field, i)
		m, err := a.valuesFromOne(f, ref)
		if err != nil {
			return nil, err
		}
		if m != nil {
			layers = append(layers, m)
		}
	}
	return layers, nil
}

func (a *addonRender) valuesFromOne(field string, ref spec.DataReference) (map[string]any, error) {
	data, err := a.readData(field, ref)
	if err != nil || data == nil {
		return nil, err
	}
	key := ref.ValuesKey
	if key == "" {
		key = "values.yaml"
	}
	text, ok := data[key]
	if !ok {
		if ref.Optional {
			return nil, nil
		}
		return nil, a.fieldError(field+".valuesKey", fmt.Errorf("%s %s has no key %q: %w", ref.Kind, ref.Name, key, errNotFound))
	}
	m := map[string]any{}
	if ref.TargetPath != "" {
		escaped := strings.NewReplacer(`\`, `\\`, `,`, `\,`).Replace(text)
		if err := strvals.ParseIntoString(ref.TargetPath+"="+escaped, m); err != nil {
			return nil, a.fieldError(field+".targetPath", fmt.Errorf("%q: %w", ref.TargetPath, err))
		}
		return m, nil
	}
	if err := yaml.Unmarshal([]byte(text), &m); err != nil {
		return nil, a.fieldError(field+".valuesKey", fmt.Errorf("%s %s key %q is not a YAML map: %w", ref.Kind, ref.Name, key, err))
	}
	return m, nil
}
