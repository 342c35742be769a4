#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes a copy of a hwloc or NCCL topology XML with every PCI bus number
mirrored (bus -> 0xff - bus), which reverses the order devices are found in:
identical hardware, other bus numbering.  usage: renumber-buses.py IN OUT"""
import re
import sys


def mirror(b):
    return "%02x" % (0xFF - int(b, 16))


def busid(m):
    return "%s:%s:%s" % (m.group(1), mirror(m.group(2)), m.group(3))


def bridge_range(m):
    # A mirrored range keeps lo <= hi by swapping its ends.
    return 'bridge_pci="%s:[%s-%s]"' % (m.group(1), mirror(m.group(3)), mirror(m.group(2)))


text = open(sys.argv[1]).read()
text = re.sub(r'bridge_pci="([0-9a-f]{4}):\[([0-9a-f]{2})-([0-9a-f]{2})\]"', bridge_range, text)
text = re.sub(r"(?<![0-9a-f:])([0-9a-f]{4}):([0-9a-f]{2}):([0-9a-f]{2}\.[0-7])", busid, text)
open(sys.argv[2], "w").write(text)
