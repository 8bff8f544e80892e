"""onboard"""
