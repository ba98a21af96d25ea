#!/usr/bin/env python3
"""Write dnntrace's manual pages and shell completions from its --help.

Runs the dnntrace just built: `dnntrace --help` gives the page dnntrace(1)
and the list of commands with their one-line summaries, `dnntrace CMD
--help` the page dnntrace-CMD(1) and the options bash and zsh complete.
The values an option takes (--format's, --sort's) are the ones the
command names when refusing another. The command itself is the one
source, so a page or a completion cannot say other than it does; the
commands named on the command line must be the ones --help lists, so a
new command cannot go without its page.

A help text is read as dnntrace writes them: a "usage:" line (indented
continuation lines), paragraphs separated by blank lines, and blocks of
options, each line "  -o, --output FILE  what it does" with the
descriptions lined up in one column and deeper-indented lines kept as
they are. Not a general help2man: it knows no other layout.

The shim's path that `record --help` prints is the one this build found;
the page names the installed one (--shim BUILT INSTALLED).
"""
import argparse
import os
import re
import subprocess
import sys


def roff(text):
    """Escape text for roff: backslashes, hyphens, a leading dot or quote."""
    text = text.replace('\\', '\\e').replace('-', '\\-')
    return re.sub(r"^([.'])", r'\\&\1', text)


def blocks(lines):
    """Lines split at blank lines."""
    block = []
    for line in lines:
        if line.strip():
            block.append(line.rstrip())
        elif block:
            yield block
            block = []
    if block:
        yield block


def indent(line):
    return len(line) - len(line.lstrip(' '))


def is_option(line):
    return line.lstrip().startswith('-') and indent(line) <= 8


def desc_column(block):
    """The column the option descriptions start at: where most of them do."""
    cols = {}
    for line in block:
        m = re.match(r'(\s*-\S.*?\S)(\s{2,})\S', line)
        if is_option(line) and m:
            col = len(m.group(1)) + len(m.group(2))
            cols[col] = cols.get(col, 0) + 1
    return max(cols, key=cols.get) if cols else 0


def split_option(line, col):
    """An option line into its term and what it says, at the column or at
    the first space past it (a term one character too long)."""
    m = re.match(r'(\s*-\S.*?\S)\s{2,}(\S.*)', line)
    if m and len(line) - len(m.group(2)) <= col:
        return m.group(1).strip(), m.group(2)
    k = line.find(' ', max(col - 1, indent(line) + 1))
    if k < 0:
        return line.strip(), ''
    return line[:k].strip(), line[k:].strip()


def parse_term(term):
    """"-o, --output FILE" -> (['-o', '--output'], 'FILE', optional)."""
    names, arg, optional = [], None, False
    for word in term.replace(',', ' ').split():
        m = re.fullmatch(r'(-[\w-]+)(\[=(\S+)\])?', word)
        if m and not arg:
            names.append(m.group(1))
            if m.group(3):
                arg, optional = m.group(3), True
        else:
            arg = word
    return names, arg, optional


def options(help_text):
    """The options of a --help text: dicts of names, arg, optional, what."""
    found = []
    for block in blocks(help_text.split('\n')):
        if re.fullmatch(r'\w+:', block[0].strip()):
            block = block[1:]
        if not block or not is_option(block[0]):
            continue
        col = desc_column(block)
        for line in block:
            if is_option(line):
                term, what = split_option(line, col)
                names, arg, optional = parse_term(term)
                found.append(dict(names=names, arg=arg, optional=optional,
                                  what=what))
            elif found and indent(line) == col:
                found[-1]['what'] += ' ' + line.strip()
    for o in found:
        # what a completion shows: up to the first parenthesis
        o['brief'] = o['what'].split(' (')[0].strip().rstrip(',;:')
    return found


def option_block(block):
    """A block of options as .TP paragraphs."""
    out = []
    col = desc_column(block)
    fill = True
    for line in block:
        if is_option(line):
            term, what = split_option(line, col)
            if not fill:
                out.append('.fi')
                fill = True
            out += ['.TP', r'\fB' + roff(term) + r'\fR']
            if what:
                out.append(roff(what))
        elif indent(line) > col and col:
            if fill:
                out.append('.nf')
                fill = False
            out.append(roff(' ' * (indent(line) - col) + line.strip()))
        else:
            if not fill:
                out.append('.fi')
                fill = True
            out.append(roff(line.strip()))
    if not fill:
        out.append('.fi')
    return out


def prose(block):
    """A paragraph, its indented lines (a command to type) kept as they
    are."""
    out = []
    fill = True
    for line in block:
        if fill == (indent(line) > 0):
            out.append('.nf' if fill else '.fi')
            fill = not fill
        out.append(roff(line.strip() if fill else line))
    if not fill:
        out.append('.fi')
    return out


def page(name, summary, version, help_text, see_also):
    """The roff of one page from its --help text."""
    lines = help_text.rstrip('\n').split('\n')
    if not lines[0].startswith('usage: '):
        sys.exit(f'dt-gen-from-help: {name}: the help does not start with usage:')
    usage = [lines[0][len('usage: '):]]
    rest = lines[1:]
    while rest and rest[0].strip():
        usage.append(rest.pop(0).strip())
    out = [f'.\\" {name}.1: written by tools/dt-gen-from-help.py from '
           f'`{name.replace("-", " ", 1)} --help`; do not edit.',
           f'.TH {name.upper()} 1 "" "dnntrace {version}" "dnntrace manual"',
           '.SH NAME', f'{roff(name)} \\- {roff(summary)}',
           '.SH SYNOPSIS', '.nf', *[roff(u) for u in usage], '.fi']
    section = None
    for block in blocks(rest):
        heading = None
        if re.fullmatch(r'\w+:', block[0].strip()) and len(block) > 1:
            heading = block[0].strip().rstrip(':')
            block = block[1:]
        if all(is_option(b) or indent(b) > 2 for b in block) and \
                is_option(block[0]):
            want = 'OPTIONS'
            body = option_block(block)
        elif heading == 'commands':
            want = 'COMMANDS'
            body = []
            for b in block:
                cmd, what = b.split(None, 1)
                body += ['.TP', r'\fB' + roff(cmd) + r'\fR', roff(what)]
        else:
            want = 'DESCRIPTION' if section in (None, 'DESCRIPTION') \
                else 'NOTES'
            body = ['.PP'] + prose(block)
        if want != section:
            out.append(f'.SH {want}')
            section = want
        out += body
    out += ['.SH SEE ALSO',
            ', '.join(f'\\fB{roff(s)}\\fR(1)' for s in see_also)]
    return '\n'.join(out) + '\n'


# Option arguments that name a file or folder; other arguments are numbers,
# rates or words.
FILE_ARGS = {'FILE', 'OUT', 'TEMPLATE'}


def positional(usage):
    """What a command's words after its options are: 'command' (record's
    program to run), 'files' (traces or folders) or None."""
    bare = re.sub(r'\[[^]]*\]', '', usage)
    if 'COMMAND' in bare:
        return 'command'
    return 'files' if re.search(r'\b[A-Z]{3,}', bare) else None


def probe_values(dnntrace, cmd, opt, env):
    """The words an option takes, as the command lists them when it
    refuses another; [] where it takes something else (a number, a
    template). An unknown option after it stops the command before it
    could run anything."""
    r = subprocess.run([dnntrace, cmd, opt, '@@', '--dt-no-such-option'],
                       capture_output=True, text=True, env=env)
    m = re.search(re.escape(opt) + r' takes ((?:[\w-]+, )*[\w-]+'
                  r'(?:,? or [\w-]+)?)$', r.stderr, re.M)
    return re.split(r',? or |, ', m.group(1)) if m else []


def bash_completion(commands):
    """A bash completion function from commands: name -> dict(summary,
    options, args)."""
    out = ['# bash completion for dnntrace: written by tools/dt-gen-from-help.py '
           "from dnntrace's", '# --help; do not edit.',
           '# shellcheck shell=bash disable=SC2207 # compgen words, as '
           'bash-completion does', '',
           '_dnntrace()', '{',
           '\tlocal cur=${COMP_WORDS[COMP_CWORD]} '
           'prev=${COMP_WORDS[COMP_CWORD - 1]}',
           '\tlocal cmd=${COMP_WORDS[1]} opts="" args="" i',
           '\tlocal IFS=$\'\\n\'', '',
           '\tCOMPREPLY=()',
           '\tif [ "$COMP_CWORD" -eq 1 ]; then',
           "\t\tCOMPREPLY=($(IFS=' ' compgen -W '%s -h --help -V --version' "
           '-- "$cur"))' % ' '.join(commands),
           '\t\treturn', '\tfi',
           '\t# the value of the option before']
    arms, files, others = [], [], []
    for cmd, c in commands.items():
        for o in c['options']:
            if not o['arg'] or o['optional']:
                continue
            words = [f"'{cmd} {n}'" for n in o['names']]
            if o['values']:
                arms += [' | '.join(words) + ')',
                         "\tCOMPREPLY=($(IFS=' ' compgen -W '%s' -- "
                         '"$cur"))' % ' '.join(o['values']),
                         '\treturn', '\t;;']
            elif o['arg'] in FILE_ARGS:
                files += words
            else:
                others += words
    arms += [' | '.join(files) + ')',
             '\tCOMPREPLY=($(compgen -f -- "$cur"))', '\treturn', '\t;;',
             '# numbers, rates, lists: nothing to offer',
             ' | \\\n\t'.join(others) + ')', '\treturn', '\t;;']
    out += ['\tcase "$cmd $prev" in'] + ['\t' + a for a in arms]
    out += ['\tesac', '\tcase $cmd in']
    for cmd, c in commands.items():
        # the long names, and the short ones of options without one
        names = ' '.join(n for o in c['options'] for n in o['names']
                         if n.startswith('--') or not any(
                             m.startswith('--') for m in o['names']))
        out += [f'\t{cmd})', f"\t\topts='{names}' args={c['args'] or ''}",
                '\t\t;;']
    out += ['\t*)', '\t\treturn', '\t\t;;', '\tesac',
            '\t# record: the program to run, after -- or the first word that',
            '\t# is no option, completes as a command line of its own',
            '\tif [ "$args" = command ]; then',
            '\t\tfor ((i = 2; i < COMP_CWORD; i++)); do',
            '\t\t\tcase ${COMP_WORDS[i]} in',
            '\t\t\t--) ;;',
            '\t\t\t%s)' % ' | '.join(
                n for c in commands.values() if c['args'] == 'command'
                for o in c['options'] if o['arg'] and not o['optional']
                for n in o['names']),
            '\t\t\t\ti=$((i + 1))',
            '\t\t\t\tcontinue',
            '\t\t\t\t;;',
            '\t\t\t-*) continue ;;',
            '\t\t\tesac',
            '\t\t\t[ "${COMP_WORDS[i]}" = -- ] && i=$((i + 1))',
            '\t\t\tif declare -F _command_offset >/dev/null; then',
            '\t\t\t\t_command_offset "$i"',
            '\t\t\telif [ "$i" -eq "$COMP_CWORD" ]; then',
            '\t\t\t\tCOMPREPLY=($(compgen -c -- "$cur"))',
            '\t\t\telse',
            '\t\t\t\tCOMPREPLY=($(compgen -f -- "$cur"))',
            '\t\t\tfi',
            '\t\t\treturn',
            '\t\tdone', '\tfi',
            '\tcase $cur in',
            '\t-*)',
            "\t\tCOMPREPLY=($(IFS=' ' compgen -W \"$opts\" -- \"$cur\"))",
            '\t\t;;',
            '\t*)',
            '\t\t# traces, and the folders that hold them',
            '\t\tif [ "$args" = files ]; then',
            '\t\t\tCOMPREPLY=($(compgen -f -X \'!*.dnnt\' -- "$cur")',
            '\t\t\t\t$(compgen -d -- "$cur"))',
            '\t\telif [ "$args" = command ]; then',
            '\t\t\tCOMPREPLY=($(compgen -c -- "$cur"))',
            '\t\tfi',
            '\t\t;;', '\tesac', '}', '',
            'complete -o filenames -F _dnntrace dnntrace']
    return '\n'.join(out) + '\n'


def zsh_quote(text):
    """text inside a single-quoted _arguments spec's [description]."""
    return text.replace("'", "'\\''").replace('[', '\\[').replace(
        ']', '\\]').replace(':', '\\:')


def zsh_spec(o):
    """One option as _arguments takes it."""
    what = '[' + zsh_quote(o['brief']) + ']'
    if not o['arg']:
        action = ''
    elif o['values']:
        action = ':%s:(%s)' % (o['arg'], ' '.join(o['values']))
    elif o['arg'] in FILE_ARGS:
        action = ':%s:_files' % o['arg']
    else:
        action = ':%s: ' % zsh_quote(o['arg'])
    names = o['names']
    if o['optional']:
        return "'%s=-%s%s'" % (names[0], what, action)
    if len(names) == 1:
        return "'%s%s%s'" % (names[0], what, action)
    return "'(%s)'{%s}'%s%s'" % (' '.join(names), ','.join(names), what,
                                 action)


def zsh_completion(commands):
    """A zsh completion function, as bash_completion."""
    out = ['#compdef dnntrace',
           '# zsh completion for dnntrace: written by tools/dt-gen-from-help.py '
           "from dnntrace's", '# --help; do not edit.', '',
           '_dnntrace() {',
           '\tlocal curcontext=$curcontext state line',
           '\t_arguments -C \\',
           "\t\t'(- *)'{-h,--help}'[show the help]' \\",
           "\t\t'(- *)'{-V,--version}'[print the version]' \\",
           "\t\t'1:command:->command' \\",
           "\t\t'*::argument:->argument'",
           '\tcase $state in', '\tcommand)',
           '\t\tlocal -a commands=(']
    out += ["\t\t\t'%s:%s'" % (cmd, c['summary'].replace("'", "'\\''"))
            for cmd, c in commands.items()]
    out += ['\t\t)', "\t\t_describe -t commands 'dnntrace command' commands",
            '\t\t;;', '\targument)', '\t\tcase $words[1] in']
    rest = {'command': "'*::command:_normal'",
            'files': "'*:trace or folder:_files -g \"*.dnnt(-.)\"'"}
    for cmd, c in commands.items():
        specs = [zsh_spec(o) for o in c['options']]
        if c['args']:
            specs.append(rest[c['args']])
        flags = ' -S' if c['args'] == 'command' else ''
        out.append(f'\t\t{cmd})')
        out.append(f'\t\t\t_arguments{flags} \\')
        out += [f'\t\t\t\t{sp} \\' for sp in specs[:-1]]
        out += [f'\t\t\t\t{specs[-1]}', '\t\t\t;;']
    out += ['\t\tesac', '\t\t;;', '\tesac', '}', '', '_dnntrace "$@"']
    return '\n'.join(out) + '\n'


def run_help(dnntrace, args, env):
    r = subprocess.run([dnntrace] + args, capture_output=True, text=True,
                       env=env)
    if r.returncode != 0:
        sys.exit(f'dt-gen-from-help: dnntrace {" ".join(args)}: exit status '
                 f'{r.returncode}: {r.stderr.strip()}')
    return r.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('dnntrace')
    ap.add_argument('version')
    ap.add_argument('commands', nargs='+')
    ap.add_argument('--man', metavar='DIR', help='the manual pages')
    ap.add_argument('--shim', nargs=2, metavar=('BUILT', 'INSTALLED'))
    ap.add_argument('--bash', metavar='FILE', help='bash completion')
    ap.add_argument('--zsh', metavar='FILE', help='zsh completion')
    a = ap.parse_args()

    env = dict(os.environ, NO_COLOR='1')
    env.pop('DNNTRACE_LIB', None)
    if a.shim:
        env['DNNTRACE_LIB'] = a.shim[0]
    main_help = run_help(a.dnntrace, ['--help'], env)
    listed = {}
    for block in blocks(main_help.split('\n')):
        if block[0].strip() == 'commands:':
            for b in block[1:]:
                cmd, what = b.split(None, 1)
                listed[cmd] = what
    if sorted(listed) != sorted(a.commands):
        sys.exit(f'dt-gen-from-help: dnntrace --help lists {sorted(listed)}, '
                 f'the build {sorted(a.commands)}')

    pages = {'dnntrace': page('dnntrace', 'record and analyze cuDNN calls',
                              a.version, main_help,
                              ['dnntrace-' + c for c in a.commands])}
    commands = {}
    for cmd in a.commands:
        text = run_help(a.dnntrace, [cmd, '--help'], env)
        if a.shim:
            text = text.replace(os.path.realpath(a.shim[0]), a.shim[1])
        pages['dnntrace-' + cmd] = page('dnntrace-' + cmd, listed[cmd],
                                        a.version, text, ['dnntrace'])
        opts = options(text)
        for o in opts:
            long_names = [n for n in o['names'] if n.startswith('--')]
            o['values'] = probe_values(a.dnntrace, cmd, long_names[0], env) \
                if o['arg'] and long_names else []
        commands[cmd] = dict(summary=listed[cmd], options=opts,
                             args=positional(text.split('\n\n')[0]))
    for name, text in pages.items() if a.man else ():
        with open(os.path.join(a.man, name + '.1'), 'w') as f:
            f.write(text)
    for path, write in ((a.bash, bash_completion), (a.zsh, zsh_completion)):
        if path:
            with open(path, 'w') as f:
                f.write(write(commands))


if __name__ == '__main__':
    main()
