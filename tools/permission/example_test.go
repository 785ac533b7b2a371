package permission_test

import (
	"encoding/json"
	"fmt"

	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/permission"
)

func Example() {
	rules, err := permission.ParseSettings([]byte(`{"permissions": {
		"allow": ["Bash(go test:*)", "Edit(src/**)"],
		"deny":  ["Bash(rm:*)", "Read(.env)"]
	}}`))
	if err != nil {
		panic(err)
	}
	p, err := permission.New(rules)
	if err != nil {
		panic(err)
	}
	bash := func(cmd string) *tools.Call {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		return &tools.Call{Name: "bash", Arguments: string(args), Spec: tools.Spec{SideEffects: true}, Env: &tools.Env{Cwd: "/proj"}}
	}
	for _, cmd := range []string{"go test ./...", "go test ./... && git push", "go test ./... | tee out.log; rm -rf /"} {
		d := p.Decide(bash(cmd))
		fmt.Printf("%-5s %s\n", d.Outcome, cmd)
	}
	// Output:
	// allow go test ./...
	// ask   go test ./... && git push
	// deny  go test ./... | tee out.log; rm -rf /
}
