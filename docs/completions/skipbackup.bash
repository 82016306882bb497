#!/bin/bash

__skipbackup_cursor_index_in_current_word() {
    local remaining="${COMP_LINE}"

    local word
    for word in "${COMP_WORDS[@]::COMP_CWORD}"; do
        remaining="${remaining##*([[:space:]])"${word}"*([[:space:]])}"
    done

    local -ir index="$((COMP_POINT - ${#COMP_LINE} + ${#remaining}))"
    if [[ "${index}" -le 0 ]]; then
        printf 0
    else
        printf %s "${index}"
    fi
}

# positional arguments:
#
# - 1: the current (sub)command's count of positional arguments
#
# required variables:
#
# - repeating_flags: the repeating flags that the current (sub)command can accept
# - non_repeating_flags: the non-repeating flags that the current (sub)command can accept
# - repeating_options: the repeating options that the current (sub)command can accept
# - non_repeating_options: the non-repeating options that the current (sub)command can accept
# - positional_number: value ignored
# - unparsed_words: unparsed words from the current command line
#
# modified variables:
#
# - non_repeating_flags: remove flags for this (sub)command that are already on the command line
# - non_repeating_options: remove options for this (sub)command that are already on the command line
# - positional_number: set to the current positional number
# - unparsed_words: remove all flags, options, and option values for this (sub)command
__skipbackup_offer_flags_options() {
    local -ir positional_count="${1}"
    positional_number=0

    local was_flag_option_terminator_seen=false
    local is_parsing_option_value=false

    local -ar unparsed_word_indices=("${!unparsed_words[@]}")
    local -i word_index
    for word_index in "${unparsed_word_indices[@]}"; do
        if "${is_parsing_option_value}"; then
            # This word is an option value:
            # Reset marker for next word iff not currently the last word
            [[ "${word_index}" -ne "${unparsed_word_indices[${#unparsed_word_indices[@]} - 1]}" ]] && is_parsing_option_value=false
            unset "unparsed_words[${word_index}]"
            # Do not process this word as a flag or an option
            continue
        fi

        local word="${unparsed_words["${word_index}"]}"
        if ! "${was_flag_option_terminator_seen}"; then
            case "${word}" in
            --)
                unset "unparsed_words[${word_index}]"
                # by itself -- is a flag/option terminator, but if it is the last word, it is the start of a completion
                if [[ "${word_index}" -ne "${unparsed_word_indices[${#unparsed_word_indices[@]} - 1]}" ]]; then
                    was_flag_option_terminator_seen=true
                fi
                continue
                ;;
            -*)
                # ${word} is a flag or an option
                # If ${word} is an option, mark that the next word to be parsed is an option value
                local option
                for option in "${repeating_options[@]}" "${non_repeating_options[@]}"; do
                    [[ "${word}" = "${option}" ]] && is_parsing_option_value=true && break
                done

                # Remove ${word} from ${non_repeating_flags} or ${non_repeating_options} so it isn't offered again
                local not_found=true
                local -i index
                for index in "${!non_repeating_flags[@]}"; do
                    if [[ "${non_repeating_flags[${index}]}" = "${word}" ]]; then
                        unset "non_repeating_flags[${index}]"
                        non_repeating_flags=("${non_repeating_flags[@]}")
                        not_found=false
                        break
                    fi
                done
                if "${not_found}"; then
                    for index in "${!non_repeating_flags[@]}"; do
                        if [[ "${non_repeating_flags[${index}]}" = "${word}" ]]; then
                            unset "non_repeating_flags[${index}]"
                            non_repeating_flags=("${non_repeating_flags[@]}")
                            break
                        fi
                    done
                fi
                unset "unparsed_words[${word_index}]"
                continue
                ;;
            esac
        fi

        # ${word} is neither a flag, nor an option, nor an option value
        if [[ "${positional_number}" -lt "${positional_count}" || "${positional_count}" -lt 0 ]]; then
            # ${word} is a positional
            ((positional_number++))
            unset "unparsed_words[${word_index}]"
        else
            if [[ -z "${word}" ]]; then
                # Could be completing a flag, option, or subcommand
                positional_number=-1
            else
                # ${word} is a subcommand or invalid, so stop processing this (sub)command
                positional_number=-2
            fi
            break
        fi
    done

    unparsed_words=("${unparsed_words[@]}")

    if\
        ! "${was_flag_option_terminator_seen}"\
        && ! "${is_parsing_option_value}"\
        && [[ ("${cur}" = -* && "${positional_number}" -ge 0) || "${positional_number}" -eq -1 ]]
    then
        COMPREPLY+=($(compgen -W "${repeating_flags[*]} ${non_repeating_flags[*]} ${repeating_options[*]} ${non_repeating_options[*]}" -- "${cur}"))
    fi
}

__skipbackup_add_completions() {
    local completion
    while IFS='' read -r completion; do
        COMPREPLY+=("${completion}")
    done < <(IFS=$'\n' compgen "${@}" -- "${cur}")
}

__skipbackup_custom_complete() {
    if [[ -n "${cur}" || -z ${COMP_WORDS[${COMP_CWORD}]} || "${COMP_LINE:${COMP_POINT}:1}" != ' ' ]]; then
        local -ar words=("${COMP_WORDS[@]}")
    else
        local -ar words=("${COMP_WORDS[@]::${COMP_CWORD}}" '' "${COMP_WORDS[@]:${COMP_CWORD}}")
    fi

    "${COMP_WORDS[0]}" "${@}" "${words[@]}"
}

_skipbackup() {
    local state
    state="$(shopt -p;shopt -po)"
    trap "${state//$'\n'/;}" RETURN
    shopt -s extglob
    set +o history +o posix

    local -xr SAP_SHELL=bash
    local -x SAP_SHELL_VERSION
    SAP_SHELL_VERSION="$(IFS='.';printf %s "${BASH_VERSINFO[*]}")"
    local -r SAP_SHELL_VERSION

    local -r cur="${2}"
    local -r prev="${3}"

    local -i positional_number
    local -a unparsed_words=("${COMP_WORDS[@]:1:${COMP_CWORD}}")

    local -a repeating_flags=()
    local -a non_repeating_flags=(--version -h --help)
    local -a repeating_options=()
    local -a non_repeating_options=()
    __skipbackup_offer_flags_options 0

    # Offer subcommand / subcommand argument completions
    local -r subcommand="${unparsed_words[0]}"
    unset 'unparsed_words[0]'
    unparsed_words=("${unparsed_words[@]}")
    case "${subcommand}" in
    mark|clear|status|check|list|export|du|explain|sweep|run|browse|help)
        # Offer subcommand argument completions
        "_skipbackup_${subcommand}"
        ;;
    *)
        # Offer subcommand completions
        COMPREPLY+=($(compgen -W 'mark clear status check list export du explain sweep run browse help' -- "${cur}"))
        ;;
    esac
}

_skipbackup_mark() {
    repeating_flags=()
    non_repeating_flags=(-R --recursive -L --dereference -x --one-file-system -0 --null -n --dry-run -v --verbose -q --quiet --version -h --help)
    repeating_options=(-m --mechanism)
    non_repeating_options=(--form --files-from)
    __skipbackup_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '--form')
        __skipbackup_add_completions -W 'local'$'\n''smb'$'\n''smb-native'
        return
        ;;
    '-m'|'--mechanism')
        __skipbackup_add_completions -W "$(__skipbackup_custom_complete ---completion mark -- --mechanism "${COMP_CWORD}" "$(__skipbackup_cursor_index_in_current_word)")"
        return
        ;;
    '--files-from')
        __skipbackup_add_completions -f
        return
        ;;
    esac

    # Offer positional completions
    case "${positional_number}" in
    *)
        __skipbackup_add_completions -f
        return
        ;;
    esac
}

_skipbackup_clear() {
    repeating_flags=()
    non_repeating_flags=(-R --recursive -L --dereference -x --one-file-system -0 --null -n --dry-run -v --verbose -q --quiet --version -h --help)
    repeating_options=(-m --mechanism)
    non_repeating_options=(--files-from)
    __skipbackup_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '-m'|'--mechanism')
        __skipbackup_add_completions -W "$(__skipbackup_custom_complete ---completion clear -- --mechanism "${COMP_CWORD}" "$(__skipbackup_cursor_index_in_current_word)")"
        return
        ;;
    '--files-from')
        __skipbackup_add_completions -f
        return
        ;;
    esac

    # Offer positional completions
    case "${positional_number}" in
    *)
        __skipbackup_add_completions -f
        return
        ;;
    esac
}

_skipbackup_status() {
    repeating_flags=()
    non_repeating_flags=(-R --recursive -L --dereference -x --one-file-system -0 --null -v --verbose -q --quiet --version -h --help)
    repeating_options=(-m --mechanism)
    non_repeating_options=(--files-from --format)
    __skipbackup_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '-m'|'--mechanism')
        __skipbackup_add_completions -W "$(__skipbackup_custom_complete ---completion status -- --mechanism "${COMP_CWORD}" "$(__skipbackup_cursor_index_in_current_word)")"
        return
        ;;
    '--files-from')
        __skipbackup_add_completions -f
        return
        ;;
    '--format')
        __skipbackup_add_completions -W 'text'$'\n''json'
        return
        ;;
    esac

    # Offer positional completions
    case "${positional_number}" in
    *)
        __skipbackup_add_completions -f
        return
        ;;
    esac
}

_skipbackup_check() {
    repeating_flags=()
    non_repeating_flags=(-L --dereference --version -h --help)
    repeating_options=(-m --mechanism)
    non_repeating_options=()
    __skipbackup_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '-m'|'--mechanism')
        __skipbackup_add_completions -W "$(__skipbackup_custom_complete ---completion check -- --mechanism "${COMP_CWORD}" "$(__skipbackup_cursor_index_in_current_word)")"
        return
        ;;
    esac

    # Offer positional completions
    case "${positional_number}" in
    *)
        __skipbackup_add_completions -f
        return
        ;;
    esac
}

_skipbackup_list() {
    repeating_flags=()
    non_repeating_flags=(--excluded --included -x --one-file-system -0 --null -q --quiet --version -h --help)
    repeating_options=(-m --mechanism)
    non_repeating_options=()
    __skipbackup_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '-m'|'--mechanism')
        __skipbackup_add_completions -W "$(__skipbackup_custom_complete ---completion list -- --mechanism "${COMP_CWORD}" "$(__skipbackup_cursor_index_in_current_word)")"
        return
        ;;
    esac

    # Offer positional completions
    case "${positional_number}" in
    *)
        __skipbackup_add_completions -d
        return
        ;;
    esac
}

_skipbackup_export() {
    repeating_flags=()
    non_repeating_flags=(--apply -x --one-file-system -q --quiet --version -h --help)
    repeating_options=(-m --mechanism)
    non_repeating_options=(--for --profile -o --output)
    __skipbackup_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '--for')
        __skipbackup_add_completions -W 'rsync'$'\n''tar'$'\n''restic'$'\n''borg'$'\n''deja-dup'$'\n''vorta'
        return
        ;;
    '--profile')
        return
        ;;
    '-m'|'--mechanism')
        __skipbackup_add_completions -W "$(__skipbackup_custom_complete ---completion export -- --mechanism "${COMP_CWORD}" "$(__skipbackup_cursor_index_in_current_word)")"
        return
        ;;
    '-o'|'--output')
        __skipbackup_add_completions -f
        return
        ;;
    esac

    # Offer positional completions
    case "${positional_number}" in
    *)
        __skipbackup_add_completions -d
        return
        ;;
    esac
}

_skipbackup_du() {
    repeating_flags=()
    non_repeating_flags=(-x --one-file-system --apparent-size -q --quiet --version -h --help)
    repeating_options=(-m --mechanism)
    non_repeating_options=(--top --format)
    __skipbackup_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '-m'|'--mechanism')
        __skipbackup_add_completions -W "$(__skipbackup_custom_complete ---completion du -- --mechanism "${COMP_CWORD}" "$(__skipbackup_cursor_index_in_current_word)")"
        return
        ;;
    '--top')
        return
        ;;
    '--format')
        __skipbackup_add_completions -W 'text'$'\n''json'
        return
        ;;
    esac

    # Offer positional completions
    case "${positional_number}" in
    *)
        __skipbackup_add_completions -d
        return
        ;;
    esac
}

_skipbackup_explain() {
    repeating_flags=()
    non_repeating_flags=(-L --dereference --version -h --help)
    repeating_options=()
    non_repeating_options=(--format)
    __skipbackup_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '--format')
        __skipbackup_add_completions -W 'text'$'\n''json'
        return
        ;;
    esac

    # Offer positional completions
    case "${positional_number}" in
    *)
        __skipbackup_add_completions -f
        return
        ;;
    esac
}

_skipbackup_sweep() {
    repeating_flags=()
    non_repeating_flags=(--undo --list-rules --no-builtin-rules -x --one-file-system -n --dry-run -v --verbose -q --quiet --version -h --help)
    repeating_options=(-m --mechanism)
    non_repeating_options=(--rules --format)
    __skipbackup_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '--rules')
        __skipbackup_add_completions -f
        return
        ;;
    '-m'|'--mechanism')
        __skipbackup_add_completions -W "$(__skipbackup_custom_complete ---completion sweep -- --mechanism "${COMP_CWORD}" "$(__skipbackup_cursor_index_in_current_word)")"
        return
        ;;
    '--format')
        __skipbackup_add_completions -W 'text'$'\n''json'
        return
        ;;
    esac

    # Offer positional completions
    case "${positional_number}" in
    *)
        __skipbackup_add_completions -d
        return
        ;;
    esac
}

_skipbackup_run() {
    repeating_flags=()
    non_repeating_flags=(-x --one-file-system --sweep --snapshot -q --quiet --version -h --help)
    repeating_options=(-m --mechanism)
    non_repeating_options=(--for)
    __skipbackup_offer_flags_options -1

    # Offer option value completions
    case "${prev}" in
    '-m'|'--mechanism')
        __skipbackup_add_completions -W "$(__skipbackup_custom_complete ---completion run -- --mechanism "${COMP_CWORD}" "$(__skipbackup_cursor_index_in_current_word)")"
        return
        ;;
    '--for')
        __skipbackup_add_completions -W 'deja-dup'
        return
        ;;
    esac

    # Offer positional completions
    case "${positional_number}" in
    *)
        __skipbackup_add_completions -d
        return
        ;;
    esac
}

_skipbackup_browse() {
    repeating_flags=()
    non_repeating_flags=(-x --one-file-system --version -h --help)
    repeating_options=(-m --mechanism)
    non_repeating_options=(--confirm-above)
    __skipbackup_offer_flags_options 1

    # Offer option value completions
    case "${prev}" in
    '-m'|'--mechanism')
        __skipbackup_add_completions -W "$(__skipbackup_custom_complete ---completion browse -- --mechanism "${COMP_CWORD}" "$(__skipbackup_cursor_index_in_current_word)")"
        return
        ;;
    '--confirm-above')
        return
        ;;
    esac

    # Offer positional completions
    case "${positional_number}" in
    1)
        __skipbackup_add_completions -d
        return
        ;;
    esac
}

_skipbackup_help() {
    repeating_flags=()
    non_repeating_flags=(--version)
    repeating_options=()
    non_repeating_options=()
    __skipbackup_offer_flags_options -1
}

complete -o filenames -F _skipbackup skipbackup
