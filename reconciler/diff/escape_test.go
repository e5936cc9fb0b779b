package diff

import "testing"

// TestEscapesDropControlCharacters: a plan comment shows no escape
// sequence or control character of a text a profile wrote.
func TestEscapesDropControlCharacters(t *testing.T) {
	in := "\x1b[31mred\x1b[0m \x1b]8;;https://evil.example\x07<b>\x1b]8;;\x07\u202e\x00"
	if got, want := mdEscape(in), `red &lt;b&gt;`; got != want {
		t.Errorf("mdEscape: %q, want %q", got, want)
	}
	if got, want := htmlEscape(in), "red &lt;b&gt;"; got != want {
		t.Errorf("htmlEscape: %q, want %q", got, want)
	}
}
