savedcmd_modules.order := {   echo ffprobe.o;   echo ffsplat.o; :; } > modules.order
