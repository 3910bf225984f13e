# bash completion for cordon (installed by `meson install` into bash-completion's
# completions directory).  The options come from `cordon help run` itself, so they are
# those of the cordon being completed.
_cordon()
{
    local cur prev words cword
    _init_completion 2>/dev/null || {
        cur=${COMP_WORDS[COMP_CWORD]}
        prev=${COMP_WORDS[COMP_CWORD - 1]}
        words=("${COMP_WORDS[@]}")
        cword=$COMP_CWORD
    }
    if [ "$cword" -eq 1 ]; then
        COMPREPLY=($(compgen -W "run explain check bwrap help --help --version" -- "$cur"))
        return
    fi
    local sub=${words[1]} i
    # after `--` (or the first word that is not an option) comes the command
    for ((i = 2; i < cword; i++)); do
        if [ "${words[i]}" = "--" ]; then
            COMPREPLY=($(compgen -c -- "$cur"))
            return
        fi
    done
    case $sub in
    run | explain)
        case $prev in
        --base) COMPREPLY=($(compgen -W "system host empty" -- "$cur")); return ;;
        --network) COMPREPLY=($(compgen -W "none host proxy" -- "$cur")); return ;;
        --isolation) COMPREPLY=($(compgen -W "namespaces landlock auto" -- "$cur")); return ;;
        --workspace | --chdir | --data-root)
            COMPREPLY=($(compgen -d -- "$cur")); return ;;
        --allow | --allow-ro | --deny | --hide | --settings | --status-json | --network-log)
            COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --keep-env) COMPREPLY=($(compgen -e -- "$cur")); return ;;
        esac
        if [[ $cur == -* ]]; then
            local opts
            opts=$("${words[0]}" help "$sub" 2>/dev/null | sed -n 's/^  \(--[a-z-]*\).*/\1/p')
            COMPREPLY=($(compgen -W "$opts --" -- "$cur"))
        else
            COMPREPLY=($(compgen -c -- "$cur"))
        fi
        ;;
    check) COMPREPLY=($(compgen -W "--json" -- "$cur")) ;;
    help) COMPREPLY=($(compgen -W "run explain check" -- "$cur")) ;;
    esac
}
complete -F _cordon cordon
