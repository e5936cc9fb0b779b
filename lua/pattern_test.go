package lua

import (
	"strings"
	"testing"
)

// patternCases were produced by running each expression under the reference
// Lua 5.1.5 interpreter (lua5.1) with the serializer of serialize below.
var patternCases = []struct{ expr, want string }{
	{"string.find(\"hello world\", \"o w\")", "5|7"},
	{"string.find(\"hello\", \"l\", 1, true)", "3|3"},
	{"string.find(\"a.b\", \".\", 1, true)", "2|2"},
	{"string.find(\"a.b\", \"%.\")", "2|2"},
	{"string.find(\"abc\", \"b\", -1)", "nil"},
	{"string.find(\"abc\", \"b\", -2)", "2|2"},
	{"string.find(\"abc\", \"\", 10)", "4|3"},
	{"string.find(\"abc\", \"\", -10)", "1|0"},
	{"string.find(\"a+b\", \"+\", 1, true)", "2|2"},
	{"string.find(\"a+b\", \"a+b\")", "nil"},
	{"string.find(\"hello\", \"()(l)\")", "3|3|3|\"l\""},
	{"string.find(\"THE (quick) fox\", \"%f[%a]%a+\", 5)", "6|10"},
	{"string.find(\"abc\", \"[^a]\")", "2|2"},
	{"string.find(\"a-b\", \"[a-]\", 2)", "2|2"},
	{"string.find(\"x]\", \"[]]\")", "2|2"},
	{"string.find(\"x^y\", \"^\", 1, true)", "2|2"},
	{"string.find(\"x^y\", \"x^\")", "1|2"},
	{"string.find(\"aaa\", \"^a\", 2)", "2|2"},
	{"string.find(\"hello\", \"l*\")", "1|0"},
	{"string.find(\"hello\", \"l+$\")", "nil"},
	{"string.find(\"hello\", \"o$\")", "5|5"},
	{"string.find(\"he$llo\", \"$l\")", "3|4"},
	{"string.match(\"key=value\", \"(%w+)=(%w+)\")", "\"key\"|\"value\""},
	{"string.match(\"  trim me  \", \"^%s*(.-)%s*$\")", "\"trim me\""},
	{"string.match(\"2024-01-15\", \"(%d+)-(%d+)-(%d+)\")", "\"2024\"|\"01\"|\"15\""},
	{"string.match(\"hello\", \"()ll()\")", "3|5"},
	{"string.match(\"THE (quick) fox\", \"%((%a+)%)\")", "\"quick\""},
	{"string.match(\"[[x]]\", \"%b[]\")", "\"[[x]]\""},
	{"string.match(\"f(a(b)c)\", \"%b()\")", "\"(a(b)c)\""},
	{"string.match(\"hello\", \".-(l+)(.*)\")", "\"ll\"|\"o\""},
	{"string.match(\"aaa\", \"a-b\")", "nil"},
	{"string.match(\"abcabc\", \"(abc)%1\")", "\"abc\""},
	{"string.match(\"abcabd\", \"(abc)%1\")", "nil"},
	{"string.match(\"x = 10, y = 20\", \"y = (%d+)\")", "\"20\""},
	{"string.match(\"  \", \"%S\")", "nil"},
	{"string.match(\"Tab\\there\", \"%c\")", "\"\t\""},
	{"string.match(\"a1_B2\", \"[%w_]+\")", "\"a1_B2\""},
	{"string.match(\"UPPER lower\", \"%u+\")", "\"UPPER\""},
	{"string.match(\"UPPER lower\", \"%l+\")", "\"lower\""},
	{"string.match(\"0x1F\", \"0x(%x+)\")", "\"1F\""},
	{"string.match(\"a,b;c\", \"[%p]\")", "\",\""},
	{"string.match(\"hello\", \"h?ello\")", "\"hello\""},
	{"string.match(\"ello\", \"h?ello\")", "\"ello\""},
	{"string.match(\"v1.28.3-gke.100\", \"^v?(%d+)%.(%d+)\")", "\"1\"|\"28\""},
	{"string.match(\"abc\", \"((a)(b))\")", "\"ab\"|\"a\"|\"b\""},
	{"string.match(\"hello\", \"\")", "\"\""},
	{"string.match(\"hello\", \"x*\")", "\"\""},
	{"string.gsub(\"hello world\", \"(%w+)\", \"<%1>\")", "\"<hello> <world>\"|2"},
	{"string.gsub(\"abc\", \"\", \"-\")", "\"-a-b-c-\"|4"},
	{"string.gsub(\"hello world\", \"%w+\", \"%0 %0\", 1)", "\"hello hello world\"|1"},
	{"string.gsub(\"$name is $age\", \"%$(%w+)\", {name=\"Bob\", age=42})", "\"Bob is 42\"|2"},
	{"string.gsub(\"abc\", \"%w\", function(c) return c:upper() .. \".\" end)", "\"A.B.C.\"|3"},
	{"string.gsub(\"abc\", \"%w\", function() return nil end)", "\"abc\"|3"},
	{"string.gsub(\"abc\", \"%w\", function() return false end)", "\"abc\"|3"},
	{"string.gsub(\"hello\", \"l\", \"%%\")", "\"he%%o\"|2"},
	{"string.gsub(\"hello\", \"^h\", \"j\")", "\"jello\"|1"},
	{"string.gsub(\"hhh\", \"^h\", \"j\")", "\"jhh\"|1"},
	{"string.gsub(\"hello world\", \"o\", \"0\", 0)", "\"hello world\"|0"},
	{"string.gsub(\"a b c\", \" \", \"\", 5)", "\"abc\"|2"},
	{"string.gsub(\"abc\", \".\", {a=1, b=true})", "ERR invalid replacement value (a boolean)"},
	{"string.gsub(\"x\", \"x\", \"%a\")", "\"a\"|1"},
	{"string.gsub(\"one two\", \"(%w+) (%w+)\", \"%2 %1\")", "\"two one\"|1"},
	{"string.gsub(\"abc\", \"b*\", \"-\")", "\"-a--c-\"|4"},
	{"string.gsub(\"\", \"\", \"x\")", "\"x\"|1"},
	{"string.gsub(\"hello\", \"\", \"\")", "\"hello\"|6"},
	{"string.find(\"a\", \"%\")", "ERR malformed pattern (ends with '%')"},
	{"string.find(\"a\", \"[a\")", "ERR malformed pattern (missing ']')"},
	{"string.match(\"a\", \"(a\")", "ERR unfinished capture"},
	{"string.match(\"a\", \"a)\")", "ERR invalid pattern capture"},
	{"string.gsub(\"abc\", \"(b)\", \"%2\")", "ERR invalid capture index"},
	{"string.find(\"a\", \"%f\")", "ERR missing '[' after '%f' in pattern"},
	{"string.find(\"ab\", \"%bx\")", "ERR unbalanced pattern"},
}

const serialize = `
local function ser(...)
  local out = {}
  for i = 1, select('#', ...) do
    local v = select(i, ...)
    if type(v) == "string" then out[#out+1] = '"' .. v .. '"' else out[#out+1] = tostring(v) end
  end
  return table.concat(out, "|")
end
`

func TestPatternsMatchLua51(t *testing.T) {
	r := NewRunner(Options{})
	for _, tc := range patternCases {
		src := serialize + "return ser(" + tc.expr + ")"
		got, err := r.Run(t.Context(), Script{Name: "pattern.lua", Source: src}, nil)
		if err != nil {
			msg := err.(*ScriptError).Message
			got = "ERR " + msg
		}
		if got != tc.want {
			t.Errorf("%s\n got %v\nwant %v", tc.expr, got, tc.want)
		}
	}
}

func TestGmatchIteratesLikeLua(t *testing.T) {
	src := `
local out = {}
for k, v in string.gmatch("a=1, b=2, c=3", "(%w+)=(%w+)") do out[#out+1] = k .. v end
for w in ("one two"):gmatch("%a+") do out[#out+1] = w end
for p in ("ab"):gmatch("()") do out[#out+1] = p end
for x in ("^a^a"):gmatch("^a") do out[#out+1] = x end
return table.concat(out, ",")`
	if got := mustRun(t, src, nil); got != "a1,b2,c3,one,two,1,2,3,^a,^a" {
		t.Errorf("got %v", got)
	}
}

func TestPatternDepthIsBounded(t *testing.T) {
	_, err := run(t, `return string.find(string.rep("a", 1000), string.rep("a?", 1000))`, nil)
	if err == nil || !strings.Contains(err.Error(), "pattern too complex") {
		t.Fatalf("got %v", err)
	}
}
