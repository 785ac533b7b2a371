package files

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"path"
	"sort"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/editdist"
	"github.com/go-harness/harness/internal/fsimpl"
	"github.com/go-harness/harness/internal/units"
	"github.com/go-harness/harness/tools"
)

// explain turns a file system error into an error whose message tells the
// model what went wrong and what to do next. Cancellation and deadlines
// are returned as they are, so the dispatcher reports them uniformly.
func explain(ctx context.Context, call *tools.Call, op, p, given string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return ctxErr
	}
	code := harness.CodeOf(err)
	if code == harness.CodeUnknown {
		code = harness.CodeIO
	}
	var fe *fs.PathError
	if !errors.As(err, &fe) {
		fe = &fs.PathError{Err: err}
	}
	msg := message(ctx, call, op, p, given, code, fe)
	return &harness.Error{Code: harness.Code(code), Message: msg, Err: err}
}

func message(ctx context.Context, call *tools.Call, op, p, given string, code harness.Code, fe *fs.PathError) string {
	env := call.Env
	verb := map[string]string{"read": "read", "write": "write", "edit": "edit"}[op]
	relative := ""
	if !strings.HasPrefix(given, "/") && !strings.HasPrefix(given, tools.OutputScheme) && env != nil {
		relative = fmt.Sprintf(" (relative paths are resolved against the working directory %s)", env.Cwd)
	}
	switch code {
	case harness.CodeNotFound:
		msg := fmt.Sprintf("File not found: %s%s.", p, relative)
		if s := suggest(ctx, env, p); s != "" {
			msg += " " + s
		}
		if op == "edit" {
			msg += " To create a new file, use write."
		}
		return msg
	case harness.CodeNotDir:
		return fmt.Sprintf("Cannot %s %s: a directory on its path is a file. Check the path.", verb, p)
	case harness.CodeNotRegular:
		if st, err := env.FS.Stat(ctx, p); err == nil && st.Mode.IsDir() {
			return fmt.Sprintf("%s is a directory, not a file.%s Give the path of a file in it.", p, listing(ctx, env, p))
		}
		return fmt.Sprintf("%s is not a regular file (it is a device, pipe or socket), so it cannot be %s.", p, map[string]string{"read": "read", "write": "written", "edit": "edited"}[op])
	case harness.CodeNotText:
		msg := fmt.Sprintf("%s is not UTF-8 text", p)
		if fe.Detail != "" {
			msg += " (" + fe.Detail + ")"
		}
		msg += fmt.Sprintf(", so %s cannot handle it.", op)
		switch strings.ToLower(path.Ext(p)) {
		case ".png", ".jpg", ".jpeg", ".gif", ".webp":
			msg += " It looks like an image: use read_image if that tool is available."
		default:
			if op == "read" {
				msg += " Inspect binary files another way (for example with a shell command such as file, od or strings), if one is available."
			}
		}
		return msg
	case harness.CodeTooLarge:
		return fmt.Sprintf("%s is too large to %s (%s; the limit is %s). Make the change another way, for example with a script.", p, verb, units.Bytes(fe.Total), units.Bytes(fe.Limit))
	case harness.CodePermission:
		return fmt.Sprintf("Permission denied: %s cannot be %s. Choose another path, or ask the user to change the permissions.", p, map[string]string{"read": "read", "write": "written", "edit": "edited"}[op])
	case harness.CodeDenied:
		why := "the permission rules deny it"
		if fe.Err != nil {
			why = fe.Err.Error()
		}
		return fmt.Sprintf("%s cannot be %s: %s. The permission rules protect this path; choose another path, or ask the user to change the rules.", p, map[string]string{"read": "read", "write": "written", "edit": "edited"}[op], why)
	case harness.CodeOutsideRoot:
		root := "/"
		if env != nil && env.FS != nil {
			root = fsimpl.RootOf(env.FS)
		}
		why := "it is outside the workspace"
		if strings.Contains(fe.Detail, "symbolic link") {
			why = "a symbolic link on it leads outside the workspace"
		}
		return fmt.Sprintf("%s cannot be accessed: %s. Only files under %s can be used.", p, why, root)
	case harness.CodeInvalidPath:
		return fmt.Sprintf("The path %q is not valid: %s. Give an ordinary file path.", given, strings.TrimPrefix(fe.Detail, "the path "))
	case harness.CodePastEnd:
		if fe.Total == 0 {
			return fmt.Sprintf("%s is empty (0 lines); there is no line to start at. Read it without offset.", p)
		}
		return fmt.Sprintf("offset is past the end of %s, which has %s. Use an offset from 1 to %d.", p, units.Plural(int(fe.Total), "line", "lines"), fe.Total)
	case harness.CodeStale:
		if errors.Is(fe.Err, iofs.ErrNotExist) {
			return fmt.Sprintf("%s was deleted after you last read it. If it should exist again, call %s again to create it from scratch.", p, verb)
		}
		return fmt.Sprintf("%s changed after you last read it (another program or tool modified it). Read the file again, then retry the %s with its current content.", p, verb)
	case harness.CodeNotObserved:
		if op == "write" {
			return fmt.Sprintf("%s already exists and you have not read it in this session, so write will not overwrite it. Read the file first (any part is enough), then write again; for a change to part of it, prefer edit.", p)
		}
		return fmt.Sprintf("You have not read %s in this session, so it cannot be edited yet. Read the file first (any part of it is enough), then retry.", p)
	case harness.CodeExists:
		return fmt.Sprintf("%s was created by someone else at the same moment, so write did not overwrite it. Read it, then decide whether to replace it.", p)
	case harness.CodeEditNotFound:
		msg := fmt.Sprintf("old_string was not found in %s. It must match the file exactly, including whitespace, indentation and line breaks; copy it from the read output without the `N: ` line prefixes.", p)
		if len(fe.Lines) > 0 {
			if strings.Contains(fe.Detail, "whitespace") {
				msg += fmt.Sprintf(" Text that matches if whitespace is ignored starts at line %s: read the lines there again and copy their exact text.", joinLines(fe.Lines))
			} else {
				msg += fmt.Sprintf(" Its first line occurs at line %s, but the lines after it differ: read that part of the file again.", joinLines(fe.Lines))
			}
		} else {
			msg += " If the file may have changed, read it again."
		}
		return msg
	case harness.CodeAmbiguousEdit:
		where := ""
		if len(fe.Lines) > 0 {
			where = fmt.Sprintf(" (starting at line %s", joinLines(fe.Lines))
			if fe.Count > len(fe.Lines) {
				where += ", ..."
			}
			where += ")"
		}
		return fmt.Sprintf("old_string occurs %d times in %s%s. Include more of the surrounding lines so that it matches exactly once, or set replace_all to true to replace every occurrence.", fe.Count, p, where)
	case harness.CodeInvalidEdit:
		return fmt.Sprintf("The edit is not valid: %s.", fe.Detail)
	case harness.CodeAborted:
		return fmt.Sprintf("The %s of %s was cancelled.", op, p)
	case harness.CodeTimeout:
		return fmt.Sprintf("The %s of %s ran out of time.", op, p)
	}
	detail := fe.Detail
	if fe.Err != nil {
		detail = strings.TrimPrefix(fe.Err.Error(), "fs: ")
	}
	return fmt.Sprintf("Could not %s %s: %s. This is a storage problem, not a problem with the arguments; retrying may help.", verb, p, detail)
}

func joinLines(ls []int) string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = fmt.Sprint(l)
	}
	if len(parts) > 1 {
		return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
	}
	return parts[0]
}

// suggest names files in p's directory whose names are close to p's.
func suggest(ctx context.Context, env *tools.Env, p string) string {
	dir, base := path.Split(p)
	list, err := env.FS.ReadDir(ctx, path.Clean(dir))
	if err != nil {
		return ""
	}
	type cand struct {
		name string
		d    int
	}
	var cands []cand
	lb := strings.ToLower(base)
	stem := strings.TrimSuffix(lb, path.Ext(lb))
	for _, fi := range list {
		n := path.Base(fi.Path)
		ln := strings.ToLower(n)
		d := editdist.Distance(lb, ln)
		if ln == lb || strings.TrimSuffix(ln, path.Ext(ln)) == stem {
			d = 0
		}
		if d <= max(2, len(base)/4) {
			cands = append(cands, cand{n, d})
		}
	}
	if len(cands) == 0 {
		return ""
	}
	sort.Slice(cands, func(i, j int) bool {
		return cands[i].d < cands[j].d || cands[i].d == cands[j].d && cands[i].name < cands[j].name
	})
	var names []string
	for _, c := range cands[:min(3, len(cands))] {
		names = append(names, path.Join(dir, c.name))
	}
	return "Did you mean " + strings.Join(names, " or ") + "?"
}

// listing names the first entries of directory p.
func listing(ctx context.Context, env *tools.Env, p string) string {
	list, err := env.FS.ReadDir(ctx, p)
	if err != nil || len(list) == 0 {
		if err == nil {
			return " It is empty."
		}
		return ""
	}
	const show = 30
	var names []string
	for _, fi := range list[:min(show, len(list))] {
		n := path.Base(fi.Path)
		if fi.Mode.IsDir() {
			n += "/"
		}
		names = append(names, n)
	}
	s := " It contains: " + strings.Join(names, ", ")
	if len(list) > show {
		s += fmt.Sprintf(", and %d more", len(list)-show)
	}
	return s + "."
}
