function __skipbackup_should_offer_completions_for_flags_or_options -a expected_commands
    set -l non_repeating_flags_or_options $argv[2..]
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __skipbackup_parse_tokens
    test "$commands" = "$expected_commands"; and return $non_repeating_flags_or_options_absent
end

function __skipbackup_should_offer_completions_for_positional -a expected_commands positional_index_comparison expected_positional_index
    set -l non_repeating_flags_or_options
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __skipbackup_parse_tokens
    test "$commands" = "$expected_commands" -a \( "$positional_index" "$positional_index_comparison" "$expected_positional_index" \)
end

function __skipbackup_parse_tokens -S
    set -l unparsed_tokens (__skipbackup_tokens -pc)
    switch $unparsed_tokens[1]
    case 'skipbackup'
        __skipbackup_parse_subcommand 0 'version' 'h/help'
        switch $unparsed_tokens[1]
        case 'mark'
            __skipbackup_parse_subcommand -r 1 'form=' 'm/mechanism=+' 'R/recursive' 'L/dereference' 'x/one-file-system' 'files-from=' '0/null' 'n/dry-run' 'v/verbose' 'q/quiet' 'version' 'h/help'
        case 'clear'
            __skipbackup_parse_subcommand -r 1 'm/mechanism=+' 'R/recursive' 'L/dereference' 'x/one-file-system' 'files-from=' '0/null' 'n/dry-run' 'v/verbose' 'q/quiet' 'version' 'h/help'
        case 'status'
            __skipbackup_parse_subcommand -r 1 'm/mechanism=+' 'R/recursive' 'L/dereference' 'x/one-file-system' 'files-from=' '0/null' 'format=' 'v/verbose' 'q/quiet' 'version' 'h/help'
        case 'check'
            __skipbackup_parse_subcommand -r 1 'm/mechanism=+' 'L/dereference' 'version' 'h/help'
        case 'list'
            __skipbackup_parse_subcommand -r 1 'excluded' 'included' 'm/mechanism=+' 'x/one-file-system' '0/null' 'q/quiet' 'version' 'h/help'
        case 'export'
            __skipbackup_parse_subcommand -r 1 'for=' 'apply' 'profile=' 'm/mechanism=+' 'x/one-file-system' 'o/output=' 'q/quiet' 'version' 'h/help'
        case 'du'
            __skipbackup_parse_subcommand -r 1 'm/mechanism=+' 'x/one-file-system' 'apparent-size' 'top=' 'format=' 'q/quiet' 'version' 'h/help'
        case 'explain'
            __skipbackup_parse_subcommand -r 1 'L/dereference' 'format=' 'version' 'h/help'
        case 'sweep'
            __skipbackup_parse_subcommand -r 1 'undo' 'list-rules' 'rules=' 'no-builtin-rules' 'm/mechanism=+' 'x/one-file-system' 'n/dry-run' 'v/verbose' 'q/quiet' 'format=' 'version' 'h/help'
        case 'run'
            __skipbackup_parse_subcommand -r 1 'm/mechanism=+' 'x/one-file-system' 'sweep' 'for=' 'snapshot' 'q/quiet' 'version' 'h/help'
        case 'browse'
            __skipbackup_parse_subcommand 1 'm/mechanism=+' 'x/one-file-system' 'confirm-above=' 'version' 'h/help'
        case 'help'
            __skipbackup_parse_subcommand -r 1 'version'
        end
    end
end

function __skipbackup_tokens
    if test (string split -m 1 -f 1 -- . "$FISH_VERSION") -gt 3
        commandline --tokens-raw $argv
    else
        commandline -o $argv
    end
end

function __skipbackup_parse_subcommand -S -a positional_count
    argparse -s r -- $argv
    set -l option_specs $argv[2..]
    set -l is_repeating_positional $_flag_r
    set -el _flag_r
    set -a commands $unparsed_tokens[1]
    set positional_index 0
    while true
        set -e unparsed_tokens[1]
        argparse -sn "$commands" $option_specs -- $unparsed_tokens 2> /dev/null
        set unparsed_tokens $argv
        set positional_index (math $positional_index + 1)
        for non_repeating_flag_or_option in $non_repeating_flags_or_options
            if set -ql "_flag_$(string replace -a - _ -- $non_repeating_flag_or_option)"
                set non_repeating_flags_or_options_absent 1
                break
            end
        end
        test (count $unparsed_tokens) -eq 0 -o \( -z "$is_repeating_positional" -a "$positional_index" -gt "$positional_count" \) && break
    end
end

function __skipbackup_complete_directories
    set -l token (commandline -t)
    string match -- '*/' $token
    set -l subdirs $token*/
    printf %s\n $subdirs
end

function __skipbackup_custom_completion
    set -x SAP_SHELL fish
    set -x SAP_SHELL_VERSION $FISH_VERSION
    set -l tokens (__skipbackup_tokens -p)
    if test -z "$(__skipbackup_tokens -t)"
        set -l index (count (__skipbackup_tokens -pc))
        set tokens $tokens[..$index] \'\' $tokens[(math $index + 1)..]
    end
    command $tokens[1] $argv $tokens
end

complete -c 'skipbackup' -f
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup" version' -l 'version' -d 'Show the version.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_positional "skipbackup" -eq 1' -fa 'mark' -d 'Mark files and directories so that backups leave them out.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_positional "skipbackup" -eq 1' -fa 'clear' -d 'Remove the marks, so that backups include the items again.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_positional "skipbackup" -eq 1' -fa 'status' -d 'Tell whether each item is excluded from backups.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_positional "skipbackup" -eq 1' -fa 'check' -d 'Exit 0 when every PATH is excluded from backups; print nothing.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_positional "skipbackup" -eq 1' -fa 'list' -d 'Walk each ROOT and print the excluded items, or the included ones.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_positional "skipbackup" -eq 1' -fa 'export' -d 'Write the excluded items under ROOT as an exclusion file for rsync, tar, restic or borg, or into Deja Dup\'s or Vorta\'s settings.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_positional "skipbackup" -eq 1' -fa 'du' -d 'Count what the marks keep out of backups under each ROOT, and what stays in.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_positional "skipbackup" -eq 1' -fa 'explain' -d 'Say why each item is in or out of backups, and what each backup tool does with it.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_positional "skipbackup" -eq 1' -fa 'sweep' -d 'Mark what can be downloaded or built again, by rule, and keep those marks current.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_positional "skipbackup" -eq 1' -fa 'run' -d 'Run COMMAND where each ROOT shows exactly what list --included lists.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_positional "skipbackup" -eq 1' -fa 'browse' -d 'Look through ROOT in a full-screen terminal browser, and mark or clear items there.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_positional "skipbackup" -eq 1' -fa 'help' -d 'Show subcommand help information.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup mark" form' -l 'form' -d 'Where legacy and resource marks are written: local (user.NAME), smb or smb-native (a Samba share\'s stream, as a Mac client of it sees the mark).' -rfka 'local smb smb-native'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup mark"' -s 'm' -l 'mechanism' -d 'The marks to act on: legacy (iOS 5.0.1\'s com.apple.MobileBackup), resource (the iOS 5.1 isExcludedFromBackup resource value), xdg (user.xdg.robots.backup), nodump (the inode flag chattr +d sets), cachedir (a CACHEDIR.TAG in a directory), apple (legacy and resource) or all (legacy, resource and xdg). Separate several with commas, or repeat the option.' -rfka '(__skipbackup_custom_completion ---completion mark -- --mechanism (count (__skipbackup_tokens -pc)) (__skipbackup_tokens -tC))'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup mark" R recursive' -s 'R' -l 'recursive' -d 'Act on each directory\'s contents too, all the way down. Symbolic links met on the way are never followed.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup mark" L dereference' -s 'L' -l 'dereference' -d 'Follow a symbolic link given as a PATH and act on its target. Without it, a link stands for itself, and Linux keeps no user attributes on links.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup mark" one-file-system x' -s 'x' -l 'one-file-system' -d 'With --recursive, stay on each PATH\'s filesystem: directories where another filesystem is mounted are not entered.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup mark" files-from' -l 'files-from' -d 'Read more PATHs from FILE, one a line, or separated by NUL bytes with --null; - reads standard input.' -rF
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup mark" 0 null' -s '0' -l 'null' -d 'Paths in the --files-from FILE are separated by NUL bytes, as find -print0 writes them.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup mark" dry-run n' -s 'n' -l 'dry-run' -d 'Show what would be marked, and change nothing.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup mark" v verbose' -s 'v' -l 'verbose' -d 'Print each item that changes, and end with a summary of the counts on standard error.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup mark" q quiet' -s 'q' -l 'quiet' -d 'Show no progress line on a long run.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_positional "skipbackup mark" -ge 1' -F
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup mark" version' -l 'version' -d 'Show the version.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup mark" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup clear"' -s 'm' -l 'mechanism' -d 'The marks to act on: legacy (iOS 5.0.1\'s com.apple.MobileBackup), resource (the iOS 5.1 isExcludedFromBackup resource value), xdg (user.xdg.robots.backup), nodump (the inode flag chattr +d sets), cachedir (a CACHEDIR.TAG in a directory), apple (legacy and resource) or all (legacy, resource and xdg). Separate several with commas, or repeat the option.' -rfka '(__skipbackup_custom_completion ---completion clear -- --mechanism (count (__skipbackup_tokens -pc)) (__skipbackup_tokens -tC))'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup clear" R recursive' -s 'R' -l 'recursive' -d 'Act on each directory\'s contents too, all the way down. Symbolic links met on the way are never followed.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup clear" L dereference' -s 'L' -l 'dereference' -d 'Follow a symbolic link given as a PATH and act on its target. Without it, a link stands for itself, and Linux keeps no user attributes on links.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup clear" one-file-system x' -s 'x' -l 'one-file-system' -d 'With --recursive, stay on each PATH\'s filesystem: directories where another filesystem is mounted are not entered.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup clear" files-from' -l 'files-from' -d 'Read more PATHs from FILE, one a line, or separated by NUL bytes with --null; - reads standard input.' -rF
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup clear" 0 null' -s '0' -l 'null' -d 'Paths in the --files-from FILE are separated by NUL bytes, as find -print0 writes them.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup clear" dry-run n' -s 'n' -l 'dry-run' -d 'Show what would be cleared, and change nothing.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup clear" v verbose' -s 'v' -l 'verbose' -d 'Print each item that changes, and end with a summary of the counts on standard error.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup clear" q quiet' -s 'q' -l 'quiet' -d 'Show no progress line on a long run.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_positional "skipbackup clear" -ge 1' -F
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup clear" version' -l 'version' -d 'Show the version.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup clear" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup status"' -s 'm' -l 'mechanism' -d 'The marks to act on: legacy (iOS 5.0.1\'s com.apple.MobileBackup), resource (the iOS 5.1 isExcludedFromBackup resource value), xdg (user.xdg.robots.backup), nodump (the inode flag chattr +d sets), cachedir (a CACHEDIR.TAG in a directory), apple (legacy and resource) or all (legacy, resource and xdg). Separate several with commas, or repeat the option.' -rfka '(__skipbackup_custom_completion ---completion status -- --mechanism (count (__skipbackup_tokens -pc)) (__skipbackup_tokens -tC))'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup status" R recursive' -s 'R' -l 'recursive' -d 'Act on each directory\'s contents too, all the way down. Symbolic links met on the way are never followed.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup status" L dereference' -s 'L' -l 'dereference' -d 'Follow a symbolic link given as a PATH and act on its target. Without it, a link stands for itself, and Linux keeps no user attributes on links.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup status" one-file-system x' -s 'x' -l 'one-file-system' -d 'With --recursive, stay on each PATH\'s filesystem: directories where another filesystem is mounted are not entered.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup status" files-from' -l 'files-from' -d 'Read more PATHs from FILE, one a line, or separated by NUL bytes with --null; - reads standard input.' -rF
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup status" 0 null' -s '0' -l 'null' -d 'Paths in the --files-from FILE are separated by NUL bytes, as find -print0 writes them.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup status" format' -l 'format' -d 'How to print each item: text, a line as tmutil prints it, or json, one JSON object a line.' -rfka 'text json'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup status" v verbose' -s 'v' -l 'verbose' -d 'Also say which marks each item carries and which directory an inherited exclusion comes from.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup status" q quiet' -s 'q' -l 'quiet' -d 'Show no progress line on a long run.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_positional "skipbackup status" -ge 1' -F
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup status" version' -l 'version' -d 'Show the version.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup status" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup check"' -s 'm' -l 'mechanism' -d 'The marks to act on: legacy (iOS 5.0.1\'s com.apple.MobileBackup), resource (the iOS 5.1 isExcludedFromBackup resource value), xdg (user.xdg.robots.backup), nodump (the inode flag chattr +d sets), cachedir (a CACHEDIR.TAG in a directory), apple (legacy and resource) or all (legacy, resource and xdg). Separate several with commas, or repeat the option.' -rfka '(__skipbackup_custom_completion ---completion check -- --mechanism (count (__skipbackup_tokens -pc)) (__skipbackup_tokens -tC))'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup check" L dereference' -s 'L' -l 'dereference' -d 'Follow a symbolic link given as a PATH and check its target.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_positional "skipbackup check" -ge 1' -F
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup check" version' -l 'version' -d 'Show the version.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup check" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup list" excluded' -l 'excluded' -d 'Print the topmost excluded items (the default).'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup list" included' -l 'included' -d 'Print every item that no mark excludes.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup list"' -s 'm' -l 'mechanism' -d 'The marks to act on: legacy (iOS 5.0.1\'s com.apple.MobileBackup), resource (the iOS 5.1 isExcludedFromBackup resource value), xdg (user.xdg.robots.backup), nodump (the inode flag chattr +d sets), cachedir (a CACHEDIR.TAG in a directory), apple (legacy and resource) or all (legacy, resource and xdg). Separate several with commas, or repeat the option.' -rfka '(__skipbackup_custom_completion ---completion list -- --mechanism (count (__skipbackup_tokens -pc)) (__skipbackup_tokens -tC))'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup list" one-file-system x' -s 'x' -l 'one-file-system' -d 'Stay on each ROOT\'s filesystem: directories where another filesystem is mounted are listed but not entered.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup list" 0 null' -s '0' -l 'null' -d 'End each path with a NUL byte instead of a newline.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup list" q quiet' -s 'q' -l 'quiet' -d 'Show no progress line on a long run.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_positional "skipbackup list" -ge 1' -fa '(__skipbackup_complete_directories)'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup list" version' -l 'version' -d 'Show the version.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup list" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup export" for' -l 'for' -d 'The backup tool that reads the file, or the backup app whose settings hold the items.' -rfka 'rsync tar restic borg deja-dup vorta'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup export" apply' -l 'apply' -d 'Write the items into the app\'s settings (deja-dup, vorta) rather than print them.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup export" profile' -l 'profile' -d 'The Vorta profile to update (default: every profile).' -rfka ''
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup export"' -s 'm' -l 'mechanism' -d 'The marks to act on: legacy (iOS 5.0.1\'s com.apple.MobileBackup), resource (the iOS 5.1 isExcludedFromBackup resource value), xdg (user.xdg.robots.backup), nodump (the inode flag chattr +d sets), cachedir (a CACHEDIR.TAG in a directory), apple (legacy and resource) or all (legacy, resource and xdg). Separate several with commas, or repeat the option.' -rfka '(__skipbackup_custom_completion ---completion export -- --mechanism (count (__skipbackup_tokens -pc)) (__skipbackup_tokens -tC))'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup export" one-file-system x' -s 'x' -l 'one-file-system' -d 'Stay on ROOT\'s filesystem: directories where another filesystem is mounted are checked but not entered. Give the backup tool its own option too.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup export" o output' -s 'o' -l 'output' -d 'Write the file to FILE instead of standard output.' -rF
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup export" q quiet' -s 'q' -l 'quiet' -d 'Show no progress line on a long run.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_positional "skipbackup export" -ge 1' -fa '(__skipbackup_complete_directories)'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup export" version' -l 'version' -d 'Show the version.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup export" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup du"' -s 'm' -l 'mechanism' -d 'The marks to act on: legacy (iOS 5.0.1\'s com.apple.MobileBackup), resource (the iOS 5.1 isExcludedFromBackup resource value), xdg (user.xdg.robots.backup), nodump (the inode flag chattr +d sets), cachedir (a CACHEDIR.TAG in a directory), apple (legacy and resource) or all (legacy, resource and xdg). Separate several with commas, or repeat the option.' -rfka '(__skipbackup_custom_completion ---completion du -- --mechanism (count (__skipbackup_tokens -pc)) (__skipbackup_tokens -tC))'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup du" one-file-system x' -s 'x' -l 'one-file-system' -d 'Stay on each ROOT\'s filesystem: directories where another filesystem is mounted are left out, as du -x leaves them.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup du" apparent-size' -l 'apparent-size' -d 'Count apparent sizes (st_size), as du --apparent-size, rather than disk usage.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup du" top' -l 'top' -d 'How many of the largest excluded items and included directories to name.' -rfka ''
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup du" format' -l 'format' -d 'How to print: text, for a person, or json, one JSON object a ROOT.' -rfka 'text json'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup du" q quiet' -s 'q' -l 'quiet' -d 'Show no progress line on a long run.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_positional "skipbackup du" -ge 1' -fa '(__skipbackup_complete_directories)'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup du" version' -l 'version' -d 'Show the version.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup du" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup explain" L dereference' -s 'L' -l 'dereference' -d 'Follow a symbolic link given as a PATH and explain its target.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup explain" format' -l 'format' -d 'How to print: text, for a person, or json, one JSON object a PATH.' -rfka 'text json'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_positional "skipbackup explain" -ge 1' -F
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup explain" version' -l 'version' -d 'Show the version.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup explain" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup sweep" undo' -l 'undo' -d 'Take back every mark a sweep made under each ROOT, and only those.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup sweep" list-rules' -l 'list-rules' -d 'Print every effective rule, one a line: its name, the rule, and where it comes from.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup sweep" rules' -l 'rules' -d 'Read the rules from FILE instead of $XDG_CONFIG_HOME/skipbackup/rules (or ~/.config/skipbackup/rules).' -rF
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup sweep" no-builtin-rules' -l 'no-builtin-rules' -d 'Apply only the rules file\'s rules.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup sweep"' -s 'm' -l 'mechanism' -d 'The marks to act on: legacy (iOS 5.0.1\'s com.apple.MobileBackup), resource (the iOS 5.1 isExcludedFromBackup resource value), xdg (user.xdg.robots.backup), nodump (the inode flag chattr +d sets), cachedir (a CACHEDIR.TAG in a directory), apple (legacy and resource) or all (legacy, resource and xdg). Separate several with commas, or repeat the option.' -rfka '(__skipbackup_custom_completion ---completion sweep -- --mechanism (count (__skipbackup_tokens -pc)) (__skipbackup_tokens -tC))'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup sweep" one-file-system x' -s 'x' -l 'one-file-system' -d 'Stay on each ROOT\'s filesystem: directories where another filesystem is mounted are not entered.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup sweep" dry-run n' -s 'n' -l 'dry-run' -d 'Show what would change and how much each item would keep out of backups, with a total; change nothing.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup sweep" v verbose' -s 'v' -l 'verbose' -d 'Print each item that changes, and end with a summary of the counts on standard error.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup sweep" q quiet' -s 'q' -l 'quiet' -d 'Show no progress line on a long run.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup sweep" format' -l 'format' -d 'How to print each change: text, one line each, or json, one JSON object a line.' -rfka 'text json'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_positional "skipbackup sweep" -ge 1' -fa '(__skipbackup_complete_directories)'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup sweep" version' -l 'version' -d 'Show the version.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup sweep" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup run"' -s 'm' -l 'mechanism' -d 'The marks to act on: legacy (iOS 5.0.1\'s com.apple.MobileBackup), resource (the iOS 5.1 isExcludedFromBackup resource value), xdg (user.xdg.robots.backup), nodump (the inode flag chattr +d sets), cachedir (a CACHEDIR.TAG in a directory), apple (legacy and resource) or all (legacy, resource and xdg). Separate several with commas, or repeat the option.' -rfka '(__skipbackup_custom_completion ---completion run -- --mechanism (count (__skipbackup_tokens -pc)) (__skipbackup_tokens -tC))'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup run" one-file-system x' -s 'x' -l 'one-file-system' -d 'Leave filesystems mounted below each ROOT, and btrfs subvolumes nested in its own, out of the view: each shows as the empty directory list -x lists (without -x, each is a view of its own, its marks honoured).'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup run" sweep' -l 'sweep' -d 'Run skipbackup sweep on each ROOT first, with the user\'s rules.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup run" for' -l 'for' -d 'Wrap the backup app\'s own runs of its tool, given as COMMAND with no ROOT: a backup sees the view of each folder the app saves, its state kept real; any other run runs as it is (Deja Dup\'s custom-tool-wrapper).' -rfka 'deja-dup'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup run" snapshot' -l 'snapshot' -d 'Take a read-only btrfs snapshot of the subvolume that holds each ROOT, and show COMMAND the snapshot, at ROOT\'s own path, without what was marked at that instant.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup run" q quiet' -s 'q' -l 'quiet' -d 'Show no progress line on a long run.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_positional "skipbackup run" -ge 1' -fa '(__skipbackup_complete_directories)'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup run" version' -l 'version' -d 'Show the version.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup run" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup browse"' -s 'm' -l 'mechanism' -d 'The marks to act on: legacy (iOS 5.0.1\'s com.apple.MobileBackup), resource (the iOS 5.1 isExcludedFromBackup resource value), xdg (user.xdg.robots.backup), nodump (the inode flag chattr +d sets), cachedir (a CACHEDIR.TAG in a directory), apple (legacy and resource) or all (legacy, resource and xdg). Separate several with commas, or repeat the option.' -rfka '(__skipbackup_custom_completion ---completion browse -- --mechanism (count (__skipbackup_tokens -pc)) (__skipbackup_tokens -tC))'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup browse" one-file-system x' -s 'x' -l 'one-file-system' -d 'Stay on ROOT\'s filesystem: directories where another filesystem is mounted are left out, as du -x leaves them.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup browse" confirm-above' -l 'confirm-above' -d 'Ask before m marks a directory with more backed-up bytes than SIZE (a number, with K, M, G or T for powers of 1024; 0 asks for every directory).' -rfka ''
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_positional "skipbackup browse" -eq 1' -fa '(__skipbackup_complete_directories)'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup browse" version' -l 'version' -d 'Show the version.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup browse" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'skipbackup' -n '__skipbackup_should_offer_completions_for_flags_or_options "skipbackup help" version' -l 'version' -d 'Show the version.'
