"""ground_station"""
