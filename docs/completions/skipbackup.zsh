#compdef skipbackup

__skipbackup_complete() {
    local -ar non_empty_completions=("${@:#(|:*)}")
    local -ar empty_completions=("${(M)@:#(|:*)}")
    _describe -V '' non_empty_completions -- empty_completions -P $'\'\''
}

__skipbackup_custom_complete() {
    local -a completions
    completions=("${(@f)"$("${command_name}" "${@}" "${command_line[@]}")"}")
    if [[ "${#completions[@]}" -gt 1 ]]; then
        __skipbackup_complete "${completions[@]:0:-1}"
    fi
}

__skipbackup_cursor_index_in_current_word() {
    if [[ -z "${QIPREFIX}${IPREFIX}${PREFIX}" ]]; then
        printf 0
    else
        printf %s "${#${(z)LBUFFER}[-1]}"
    fi
}

_skipbackup() {
    emulate -RL zsh -G
    setopt extendedglob nullglob numericglobsort
    unsetopt aliases banghist

    local -xr SAP_SHELL=zsh
    local -x SAP_SHELL_VERSION
    SAP_SHELL_VERSION="$(builtin emulate zsh -c 'printf %s "${ZSH_VERSION}"')"
    local -r SAP_SHELL_VERSION

    local context state state_descr line
    local -A opt_args

    local -r command_name="${words[1]}"
    local -ar command_line=("${words[@]}")
    local -ir current_word_index="$((CURRENT - 1))"

    local -i ret=1
    local -ar arg_specs=(
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
        '(-): :->command'
        '(-)*:: :->arg'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0
    case "${state}" in
    command)
        local -ar subcommands=(
            'mark:Mark files and directories so that backups leave them out.'
            'clear:Remove the marks, so that backups include the items again.'
            'status:Tell whether each item is excluded from backups.'
            'check:Exit 0 when every PATH is excluded from backups; print nothing.'
            'list:Walk each ROOT and print the excluded items, or the included ones.'
            'export:Write the excluded items under ROOT as an exclusion file for rsync, tar, restic or borg, or into Deja Dup'\''s or Vorta'\''s settings.'
            'du:Count what the marks keep out of backups under each ROOT, and what stays in.'
            'explain:Say why each item is in or out of backups, and what each backup tool does with it.'
            'sweep:Mark what can be downloaded or built again, by rule, and keep those marks current.'
            'run:Run COMMAND where each ROOT shows exactly what list --included lists.'
            'browse:Look through ROOT in a full-screen terminal browser, and mark or clear items there.'
            'help:Show subcommand help information.'
        )
        _describe -V subcommand subcommands && ret=0
        ;;
    arg)
        case "${words[1]}" in
        mark|clear|status|check|list|export|du|explain|sweep|run|browse|help)
            "_skipbackup_${words[1]}" && ret=0
            ;;
        esac
        ;;
    esac

    return "${ret}"
}

_skipbackup_mark() {
    local -i ret=1
    local -ar ___form=('local' 'smb' 'smb-native')
    local -ar arg_specs=(
        '--form[Where legacy and resource marks are written\: local (user.NAME), smb or smb-native (a Samba share'\''s stream, as a Mac client of it sees the mark).]:form:{__skipbackup_complete "${___form[@]}"}'
        '*'{-m,--mechanism}'[The marks to act on\: legacy (iOS 5.0.1'\''s com.apple.MobileBackup), resource (the iOS 5.1 isExcludedFromBackup resource value), xdg (user.xdg.robots.backup), nodump (the inode flag chattr +d sets), cachedir (a CACHEDIR.TAG in a directory), apple (legacy and resource) or all (legacy, resource and xdg). Separate several with commas, or repeat the option.]:M:{__skipbackup_custom_complete ---completion mark -- --mechanism "${current_word_index}" "$(__skipbackup_cursor_index_in_current_word)"}'
        '(-R --recursive)'{-R,--recursive}'[Act on each directory'\''s contents too, all the way down. Symbolic links met on the way are never followed.]'
        '(-L --dereference)'{-L,--dereference}'[Follow a symbolic link given as a PATH and act on its target. Without it, a link stands for itself, and Linux keeps no user attributes on links.]'
        '(-x --one-file-system)'{-x,--one-file-system}'[With --recursive, stay on each PATH'\''s filesystem\: directories where another filesystem is mounted are not entered.]'
        '--files-from[Read more PATHs from FILE, one a line, or separated by NUL bytes with --null; - reads standard input.]:FILE:_files'
        '(-0 --null)'{-0,--null}'[Paths in the --files-from FILE are separated by NUL bytes, as find -print0 writes them.]'
        '(-n --dry-run)'{-n,--dry-run}'[Show what would be marked, and change nothing.]'
        '(-v --verbose)'{-v,--verbose}'[Print each item that changes, and end with a summary of the counts on standard error.]'
        '(-q --quiet)'{-q,--quiet}'[Show no progress line on a long run.]'
        '*:PATH:_files'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_skipbackup_clear() {
    local -i ret=1
    local -ar arg_specs=(
        '*'{-m,--mechanism}'[The marks to act on\: legacy (iOS 5.0.1'\''s com.apple.MobileBackup), resource (the iOS 5.1 isExcludedFromBackup resource value), xdg (user.xdg.robots.backup), nodump (the inode flag chattr +d sets), cachedir (a CACHEDIR.TAG in a directory), apple (legacy and resource) or all (legacy, resource and xdg). Separate several with commas, or repeat the option.]:M:{__skipbackup_custom_complete ---completion clear -- --mechanism "${current_word_index}" "$(__skipbackup_cursor_index_in_current_word)"}'
        '(-R --recursive)'{-R,--recursive}'[Act on each directory'\''s contents too, all the way down. Symbolic links met on the way are never followed.]'
        '(-L --dereference)'{-L,--dereference}'[Follow a symbolic link given as a PATH and act on its target. Without it, a link stands for itself, and Linux keeps no user attributes on links.]'
        '(-x --one-file-system)'{-x,--one-file-system}'[With --recursive, stay on each PATH'\''s filesystem\: directories where another filesystem is mounted are not entered.]'
        '--files-from[Read more PATHs from FILE, one a line, or separated by NUL bytes with --null; - reads standard input.]:FILE:_files'
        '(-0 --null)'{-0,--null}'[Paths in the --files-from FILE are separated by NUL bytes, as find -print0 writes them.]'
        '(-n --dry-run)'{-n,--dry-run}'[Show what would be cleared, and change nothing.]'
        '(-v --verbose)'{-v,--verbose}'[Print each item that changes, and end with a summary of the counts on standard error.]'
        '(-q --quiet)'{-q,--quiet}'[Show no progress line on a long run.]'
        '*:PATH:_files'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_skipbackup_status() {
    local -i ret=1
    local -ar ___format=('text' 'json')
    local -ar arg_specs=(
        '*'{-m,--mechanism}'[The marks to act on\: legacy (iOS 5.0.1'\''s com.apple.MobileBackup), resource (the iOS 5.1 isExcludedFromBackup resource value), xdg (user.xdg.robots.backup), nodump (the inode flag chattr +d sets), cachedir (a CACHEDIR.TAG in a directory), apple (legacy and resource) or all (legacy, resource and xdg). Separate several with commas, or repeat the option.]:M:{__skipbackup_custom_complete ---completion status -- --mechanism "${current_word_index}" "$(__skipbackup_cursor_index_in_current_word)"}'
        '(-R --recursive)'{-R,--recursive}'[Act on each directory'\''s contents too, all the way down. Symbolic links met on the way are never followed.]'
        '(-L --dereference)'{-L,--dereference}'[Follow a symbolic link given as a PATH and act on its target. Without it, a link stands for itself, and Linux keeps no user attributes on links.]'
        '(-x --one-file-system)'{-x,--one-file-system}'[With --recursive, stay on each PATH'\''s filesystem\: directories where another filesystem is mounted are not entered.]'
        '--files-from[Read more PATHs from FILE, one a line, or separated by NUL bytes with --null; - reads standard input.]:FILE:_files'
        '(-0 --null)'{-0,--null}'[Paths in the --files-from FILE are separated by NUL bytes, as find -print0 writes them.]'
        '--format[How to print each item\: text, a line as tmutil prints it, or json, one JSON object a line.]:text|json:{__skipbackup_complete "${___format[@]}"}'
        '(-v --verbose)'{-v,--verbose}'[Also say which marks each item carries and which directory an inherited exclusion comes from.]'
        '(-q --quiet)'{-q,--quiet}'[Show no progress line on a long run.]'
        '*:PATH:_files'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_skipbackup_check() {
    local -i ret=1
    local -ar arg_specs=(
        '*'{-m,--mechanism}'[The marks to act on\: legacy (iOS 5.0.1'\''s com.apple.MobileBackup), resource (the iOS 5.1 isExcludedFromBackup resource value), xdg (user.xdg.robots.backup), nodump (the inode flag chattr +d sets), cachedir (a CACHEDIR.TAG in a directory), apple (legacy and resource) or all (legacy, resource and xdg). Separate several with commas, or repeat the option.]:M:{__skipbackup_custom_complete ---completion check -- --mechanism "${current_word_index}" "$(__skipbackup_cursor_index_in_current_word)"}'
        '(-L --dereference)'{-L,--dereference}'[Follow a symbolic link given as a PATH and check its target.]'
        '*:PATH:_files'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_skipbackup_list() {
    local -i ret=1
    local -ar arg_specs=(
        '--excluded[Print the topmost excluded items (the default).]'
        '--included[Print every item that no mark excludes.]'
        '*'{-m,--mechanism}'[The marks to act on\: legacy (iOS 5.0.1'\''s com.apple.MobileBackup), resource (the iOS 5.1 isExcludedFromBackup resource value), xdg (user.xdg.robots.backup), nodump (the inode flag chattr +d sets), cachedir (a CACHEDIR.TAG in a directory), apple (legacy and resource) or all (legacy, resource and xdg). Separate several with commas, or repeat the option.]:M:{__skipbackup_custom_complete ---completion list -- --mechanism "${current_word_index}" "$(__skipbackup_cursor_index_in_current_word)"}'
        '(-x --one-file-system)'{-x,--one-file-system}'[Stay on each ROOT'\''s filesystem\: directories where another filesystem is mounted are listed but not entered.]'
        '(-0 --null)'{-0,--null}'[End each path with a NUL byte instead of a newline.]'
        '(-q --quiet)'{-q,--quiet}'[Show no progress line on a long run.]'
        '*:ROOT:_files -/'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_skipbackup_export() {
    local -i ret=1
    local -ar ___for=('rsync' 'tar' 'restic' 'borg' 'deja-dup' 'vorta')
    local -ar arg_specs=(
        '--for[The backup tool that reads the file, or the backup app whose settings hold the items.]:TOOL:{__skipbackup_complete "${___for[@]}"}'
        '--apply[Write the items into the app'\''s settings (deja-dup, vorta) rather than print them.]'
        '--profile[The Vorta profile to update (default\: every profile).]:NAME:'
        '*'{-m,--mechanism}'[The marks to act on\: legacy (iOS 5.0.1'\''s com.apple.MobileBackup), resource (the iOS 5.1 isExcludedFromBackup resource value), xdg (user.xdg.robots.backup), nodump (the inode flag chattr +d sets), cachedir (a CACHEDIR.TAG in a directory), apple (legacy and resource) or all (legacy, resource and xdg). Separate several with commas, or repeat the option.]:M:{__skipbackup_custom_complete ---completion export -- --mechanism "${current_word_index}" "$(__skipbackup_cursor_index_in_current_word)"}'
        '(-x --one-file-system)'{-x,--one-file-system}'[Stay on ROOT'\''s filesystem\: directories where another filesystem is mounted are checked but not entered. Give the backup tool its own option too.]'
        '(-o --output)'{-o,--output}'[Write the file to FILE instead of standard output.]:FILE:_files'
        '(-q --quiet)'{-q,--quiet}'[Show no progress line on a long run.]'
        '*:ROOT:_files -/'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_skipbackup_du() {
    local -i ret=1
    local -ar ___format=('text' 'json')
    local -ar arg_specs=(
        '*'{-m,--mechanism}'[The marks to act on\: legacy (iOS 5.0.1'\''s com.apple.MobileBackup), resource (the iOS 5.1 isExcludedFromBackup resource value), xdg (user.xdg.robots.backup), nodump (the inode flag chattr +d sets), cachedir (a CACHEDIR.TAG in a directory), apple (legacy and resource) or all (legacy, resource and xdg). Separate several with commas, or repeat the option.]:M:{__skipbackup_custom_complete ---completion du -- --mechanism "${current_word_index}" "$(__skipbackup_cursor_index_in_current_word)"}'
        '(-x --one-file-system)'{-x,--one-file-system}'[Stay on each ROOT'\''s filesystem\: directories where another filesystem is mounted are left out, as du -x leaves them.]'
        '--apparent-size[Count apparent sizes (st_size), as du --apparent-size, rather than disk usage.]'
        '--top[How many of the largest excluded items and included directories to name.]:N:'
        '--format[How to print\: text, for a person, or json, one JSON object a ROOT.]:text|json:{__skipbackup_complete "${___format[@]}"}'
        '(-q --quiet)'{-q,--quiet}'[Show no progress line on a long run.]'
        '*:ROOT:_files -/'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_skipbackup_explain() {
    local -i ret=1
    local -ar ___format=('text' 'json')
    local -ar arg_specs=(
        '(-L --dereference)'{-L,--dereference}'[Follow a symbolic link given as a PATH and explain its target.]'
        '--format[How to print\: text, for a person, or json, one JSON object a PATH.]:text|json:{__skipbackup_complete "${___format[@]}"}'
        '*:PATH:_files'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_skipbackup_sweep() {
    local -i ret=1
    local -ar ___format=('text' 'json')
    local -ar arg_specs=(
        '--undo[Take back every mark a sweep made under each ROOT, and only those.]'
        '--list-rules[Print every effective rule, one a line\: its name, the rule, and where it comes from.]'
        '--rules[Read the rules from FILE instead of $XDG_CONFIG_HOME/skipbackup/rules (or ~/.config/skipbackup/rules).]:FILE:_files'
        '--no-builtin-rules[Apply only the rules file'\''s rules.]'
        '*'{-m,--mechanism}'[The marks to act on\: legacy (iOS 5.0.1'\''s com.apple.MobileBackup), resource (the iOS 5.1 isExcludedFromBackup resource value), xdg (user.xdg.robots.backup), nodump (the inode flag chattr +d sets), cachedir (a CACHEDIR.TAG in a directory), apple (legacy and resource) or all (legacy, resource and xdg). Separate several with commas, or repeat the option.]:M:{__skipbackup_custom_complete ---completion sweep -- --mechanism "${current_word_index}" "$(__skipbackup_cursor_index_in_current_word)"}'
        '(-x --one-file-system)'{-x,--one-file-system}'[Stay on each ROOT'\''s filesystem\: directories where another filesystem is mounted are not entered.]'
        '(-n --dry-run)'{-n,--dry-run}'[Show what would change and how much each item would keep out of backups, with a total; change nothing.]'
        '(-v --verbose)'{-v,--verbose}'[Print each item that changes, and end with a summary of the counts on standard error.]'
        '(-q --quiet)'{-q,--quiet}'[Show no progress line on a long run.]'
        '--format[How to print each change\: text, one line each, or json, one JSON object a line.]:text|json:{__skipbackup_complete "${___format[@]}"}'
        '*:ROOT:_files -/'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_skipbackup_run() {
    local -i ret=1
    local -ar ___for=('deja-dup')
    local -ar arg_specs=(
        '*'{-m,--mechanism}'[The marks to act on\: legacy (iOS 5.0.1'\''s com.apple.MobileBackup), resource (the iOS 5.1 isExcludedFromBackup resource value), xdg (user.xdg.robots.backup), nodump (the inode flag chattr +d sets), cachedir (a CACHEDIR.TAG in a directory), apple (legacy and resource) or all (legacy, resource and xdg). Separate several with commas, or repeat the option.]:M:{__skipbackup_custom_complete ---completion run -- --mechanism "${current_word_index}" "$(__skipbackup_cursor_index_in_current_word)"}'
        '(-x --one-file-system)'{-x,--one-file-system}'[Leave filesystems mounted below each ROOT, and btrfs subvolumes nested in its own, out of the view\: each shows as the empty directory list -x lists (without -x, each is a view of its own, its marks honoured).]'
        '--sweep[Run skipbackup sweep on each ROOT first, with the user'\''s rules.]'
        '--for[Wrap the backup app'\''s own runs of its tool, given as COMMAND with no ROOT\: a backup sees the view of each folder the app saves, its state kept real; any other run runs as it is (Deja Dup'\''s custom-tool-wrapper).]:app:{__skipbackup_complete "${___for[@]}"}'
        '--snapshot[Take a read-only btrfs snapshot of the subvolume that holds each ROOT, and show COMMAND the snapshot, at ROOT'\''s own path, without what was marked at that instant.]'
        '(-q --quiet)'{-q,--quiet}'[Show no progress line on a long run.]'
        '*:ROOT... -- COMMAND:_files -/'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_skipbackup_browse() {
    local -i ret=1
    local -ar arg_specs=(
        '*'{-m,--mechanism}'[The marks to act on\: legacy (iOS 5.0.1'\''s com.apple.MobileBackup), resource (the iOS 5.1 isExcludedFromBackup resource value), xdg (user.xdg.robots.backup), nodump (the inode flag chattr +d sets), cachedir (a CACHEDIR.TAG in a directory), apple (legacy and resource) or all (legacy, resource and xdg). Separate several with commas, or repeat the option.]:M:{__skipbackup_custom_complete ---completion browse -- --mechanism "${current_word_index}" "$(__skipbackup_cursor_index_in_current_word)"}'
        '(-x --one-file-system)'{-x,--one-file-system}'[Stay on ROOT'\''s filesystem\: directories where another filesystem is mounted are left out, as du -x leaves them.]'
        '--confirm-above[Ask before m marks a directory with more backed-up bytes than SIZE (a number, with K, M, G or T for powers of 1024; 0 asks for every directory).]:SIZE:'
        ':ROOT:_files -/'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_skipbackup_help() {
    local -i ret=1
    local -ar arg_specs=(
        '*:subcommands:'
        '--version[Show the version.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

if [[ "${funcstack[1]}" = _skipbackup ]]; then
    _skipbackup "${@}"
else
    compdef _skipbackup skipbackup
fi
