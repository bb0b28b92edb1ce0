# ~/.bashrc: executed by bash(1) for non-login shells.
export HISTCONTROL=ignoredups
alias ll='ls -l'
