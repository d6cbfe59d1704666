"""boot"""
