package policy

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/vetohq/veto/rule"
)

// Schema returns the JSON Schema of a policy file, generated from the Go
// types and their doc tags, for editors to complete and check veto.yaml.
func Schema() []byte {
	s := schemaOf(reflect.TypeOf(File{}))
	props := s["properties"].(map[string]any)
	for _, sec := range rule.Sections() {
		p := schemaOf(sec.Type())
		p["description"] = sec.Doc
		props[sec.Key] = p
	}
	s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	s["$id"] = "https://veto.dev/schema/veto.yaml.json"
	s["title"] = "veto policy file (veto.yaml)"
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		panic(err) // the schema is built from static types
	}
	return append(b, '\n')
}

func schemaOf(t reflect.Type) map[string]any {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == durationType:
		return map[string]any{"type": "string", "pattern": `^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`}
	case t.Kind() == reflect.Struct:
		props := map[string]any{}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name := strings.Split(f.Tag.Get("yaml"), ",")[0]
			if name == "" || name == "-" {
				continue
			}
			p := schemaOf(f.Type)
			if d := f.Tag.Get("doc"); d != "" {
				p["description"] = d
			}
			props[name] = p
		}
		return map[string]any{"type": "object", "additionalProperties": false, "properties": props}
	case t.Kind() == reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaOf(t.Elem())}
	case t.Kind() == reflect.Slice:
		return map[string]any{"type": "array", "items": schemaOf(t.Elem())}
	case t.Kind() == reflect.String:
		return map[string]any{"type": "string"}
	case t.Kind() == reflect.Int:
		return map[string]any{"type": "integer", "minimum": 0}
	case t.Kind() == reflect.Bool:
		return map[string]any{"type": "boolean"}
	}
	return map[string]any{}
}
