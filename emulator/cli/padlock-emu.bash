# bash completion for padlock-emu. The option names come from `padlock-emu run --help`
# (and `system --help`) and the CPU models from `padlock-emu cpus`, so the completion
# follows the binary.
# The CPU models and their aliases.
_padlock_emu_cpus() {
  "$1" cpus 2>/dev/null | awk 'NR > 1 { print $1; if ($2 != "-") print $2 }'
}
_padlock_emu() {
  local cur prev words cword
  _init_completion 2>/dev/null || {
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD - 1]}
    words=("${COMP_WORDS[@]}")
    cword=$COMP_CWORD
  }
  local exe=${words[0]}
  if ((cword == 1)); then
    COMPREPLY=($(compgen -W "run cpus trace system --help --version" -- "$cur"))
    return
  fi
  case ${words[1]} in
    cpus) COMPREPLY=($(compgen -W "--verbose --x86 --help" -- "$cur")); return ;;
    trace)
      if ((cword == 2)); then
        COMPREPLY=($(compgen -W "summary diff" -- "$cur"))
      else
        COMPREPLY=($(compgen -f -- "$cur"))
      fi
      return ;;
    run) ;;
    system)
      case $prev in
        --cpu) COMPREPLY=($(compgen -W "$(_padlock_emu_cpus "$exe")" -- "$cur")); return ;;
        --debian-kernel) COMPREPLY=($(compgen -W "i386 amd64" -- "$cur")); return ;;
        # the suites of emulator/system/debian-kernels.txt (tests/integration/test_install.py)
        --debian-suite) COMPREPLY=($(compgen -W "bookworm bookworm-backports trixie-backports sid" -- "$cur")); return ;;
        --kernel | --initrd | --module | --trace | --check-jsonl | --check-sarif)
          COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --append | --memory) return ;;
      esac
      COMPREPLY=($(compgen -W "$("$exe" system --help 2>/dev/null | grep -oE '(^|[ ,[(|])--[a-z0-9][a-z0-9-]*' | tr -d ' ,[(|' | sort -u)" -- "$cur"))
      return ;;
    *) return ;;
  esac
  # After PROGRAM everything belongs to the guest: complete file names.
  local i
  for ((i = 2; i < cword; i++)); do
    case ${words[i]} in
      --cpu | -cpu | --mhz | --seed | -seed | --errata | --timing | --irq-hz | --quantum | --memory | -E | -U | \
        -L | --sysroot | -0 | --argv0 | --trace | --chrome-trace | --profile | --trace-max | \
        --trace-insn | --trace-range | --trace-fn | --trace-window | -d | -D | --mix | -g | --gdb | \
        --max-time | --max-memory | --sandbox | --chip-check | --progress | --check-jsonl | \
        --check-sarif) ((i++)) ;;
      -*) ;;
      *) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    esac
  done
  case $prev in
    --cpu | -cpu) COMPREPLY=($(compgen -W "$(_padlock_emu_cpus "$exe")" -- "$cur")); return ;;
    --errata | --timing | --progress) COMPREPLY=($(compgen -W "on off" -- "$cur")); return ;;
    --chip-check) COMPREPLY=($(compgen -W "ud warn off" -- "$cur")); return ;;
    # -d takes a comma-separated list of log items (docs/debugging.md): complete the last one.
    -d)
      local done=${cur%"${cur##*,}"}
      COMPREPLY=($(compgen -P "$done" -W "in_asm exec cpu padlock syscall" -- "${cur##*,}"))
      return ;;
    --memory) COMPREPLY=($(compgen -W "direct tlb" -- "$cur")); return ;;
    --trace-insn) COMPREPLY=($(compgen -W "rng ace phe pmm syscall xstore xcryptecb xcryptcbc xcryptctr xcryptcfb xcryptofb montmul xsha1 xsha256" -- "$cur")); return ;;
    -L | --sysroot | --sandbox) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    --trace | --chrome-trace | --profile | -D | --mix | --check-jsonl | --check-sarif)
      COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --mhz | --seed | -seed | --irq-hz | --quantum | -E | -U | -0 | --argv0 | --trace-max | --trace-range | \
      --trace-fn | --trace-window | -g | --gdb | --max-time | --max-memory) return ;;
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$("$exe" run --help 2>/dev/null | grep -oE '(^|[ ,])--?[a-z0-9][a-z0-9-]*' | tr -d ' ,' | sort -u)" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -F _padlock_emu padlock-emu
