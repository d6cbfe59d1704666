"""disks"""
