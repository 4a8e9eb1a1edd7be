package hosts

import (
	"net/netip"
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name     string
		text     string
		lines    []Line
		problems []Problem
	}{
		{
			name: "an address with names, comments and blank lines",
			text: "# cluster neighbours\n\n10.0.0.5\tdb1.example.corp  db1 # primary\n  \n",
			lines: []Line{{Key: "k", Number: 3, Addr: netip.MustParseAddr("10.0.0.5"),
				Names: []string{"db1.example.corp", "db1"}}},
		},
		{
			name: "names are lower-cased and lose a trailing dot; CRLF endings work",
			text: "fd00::5 DB6.Example.Corp.\r\n10.0.0.6 x\r\n",
			lines: []Line{
				{Key: "k", Number: 1, Addr: netip.MustParseAddr("fd00::5"), Names: []string{"db6.example.corp"}},
				{Key: "k", Number: 2, Addr: netip.MustParseAddr("10.0.0.6"), Names: []string{"x"}},
			},
		},
		{
			name:  "an IPv4-mapped IPv6 address is its IPv4 address",
			text:  "::ffff:10.0.0.7 mapped",
			lines: []Line{{Key: "k", Number: 1, Addr: netip.MustParseAddr("10.0.0.7"), Names: []string{"mapped"}}},
		},
		{
			name:  "bad lines are reported with their number and skipped, the others kept",
			text:  "10.0.0.x db9\n10.0.0.1 ok\n10.0.0.2\nfe80::1%eth0 link\n10.0.0.3 good bad_name\n10.0.0.4 -dash # c\n10.0.0.5 a..b\n",
			lines: []Line{{Key: "k", Number: 2, Addr: netip.MustParseAddr("10.0.0.1"), Names: []string{"ok"}}},
			problems: []Problem{
				{Key: "k", Line: 1, Text: "10.0.0.x db9", Reason: `"10.0.0.x" is not an IP address`},
				{Key: "k", Line: 3, Text: "10.0.0.2", Reason: "an address without a name"},
				{Key: "k", Line: 4, Text: "fe80::1%eth0 link", Reason: `"fe80::1%eth0" has an IPv6 zone, which DNS cannot carry`},
				{Key: "k", Line: 5, Text: "10.0.0.3 good bad_name", Reason: `"bad_name" is not a host name (letters, digits, hyphens and dots)`},
				{Key: "k", Line: 6, Text: "10.0.0.4 -dash", Reason: `"-dash" is not a host name (letters, digits, hyphens and dots)`},
				{Key: "k", Line: 7, Text: "10.0.0.5 a..b", Reason: `"a..b" is not a host name (letters, digits, hyphens and dots)`},
			},
		},
		{
			name: "a name may not be a wildcard",
			text: "10.0.0.1 *.example.corp",
			problems: []Problem{{Key: "k", Line: 1, Text: "10.0.0.1 *.example.corp",
				Reason: `"*.example.corp" is not a host name (letters, digits, hyphens and dots)`}},
		},
		{name: "empty text has no lines", text: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines, problems := Parse("k", tt.text)
			if !reflect.DeepEqual(lines, tt.lines) {
				t.Errorf("lines:\n got %+v\nwant %+v", lines, tt.lines)
			}
			if !reflect.DeepEqual(problems, tt.problems) {
				t.Errorf("problems:\n got %+v\nwant %+v", problems, tt.problems)
			}
		})
	}
}

func TestAProblemNamesKeyLineAndText(t *testing.T) {
	p := Problem{Key: "hosts", Line: 3, Text: "10.0.0.x db9", Reason: `"10.0.0.x" is not an IP address`}
	want := `data[hosts] line 3 "10.0.0.x db9": "10.0.0.x" is not an IP address`
	if p.Error() != want {
		t.Errorf("Error() = %s, want %s", p.Error(), want)
	}
}

func TestALongBadLineIsQuotedShort(t *testing.T) {
	long := "x"
	for len(long) < 500 {
		long += long
	}
	_, problems := Parse("k", long+" name")
	if len(problems) != 1 || len(problems[0].Text) > maxLineReport+3 {
		t.Fatalf("problems %v, want one quoting at most %d bytes", problems, maxLineReport+3)
	}
}
